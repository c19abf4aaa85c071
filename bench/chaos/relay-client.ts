import http from 'node:http';
import { request, type Reply } from '../client.js';
import type { Recorder } from './history.js';

// Every HTTP request of the run's clients, through the balancer, on kept-alive connections
// as real clients hold them: each one counted, timed, and, when the client sees it fail
// (no reply, or a 5xx), recorded as a client-visible error with when it happened.

/**
 * Kept-alive connections, let go after 4 s idle (as undici and browsers do): well before the
 * balancer's 10 s, so the client is never the one sending on a connection being closed.
 */
export const clientAgent = () => new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 });

export interface SendOptions {
  json?: unknown;
  headers?: Record<string, string>;
  timeoutMs?: number;
  /** A request that waits by design (a long poll): its time says nothing of the relay's speed. */
  waits?: boolean;
}

/** A request whose reply is this long past due is given up (and recorded): a freeze and a lock together stay under it. */
export const REPLY_WITHIN_MS = 45_000;

export class RelayClient {
  constructor(
    private readonly base: string,
    private readonly token: string,
    private readonly recorder: Recorder,
    private readonly agent: http.Agent,
    readonly name: string,
  ) {}

  /** The reply, or undefined when none came; a 5xx is returned and recorded as an error too. */
  async send(method: string, path: string, options: SendOptions = {}): Promise<Reply | undefined> {
    const at = Date.now();
    this.recorder.count('requests');
    const route = `${method} ${path.replace(/\?.*/, '').replace(/\/c_[\w-]+/, '/:id')}`;
    const { waits = false, ...rest } = options;
    const took = () => !waits && this.recorder.took(at, Date.now() - at);
    try {
      const reply = await request(this.base, method, path, { token: this.token, agent: this.agent, timeoutMs: REPLY_WITHIN_MS, ...rest });
      took();
      if (reply.status >= 500) {
        const code = errorCode(reply.text);
        this.recorder.error(this.name, `${route}: HTTP ${reply.status} ${code ?? "(the balancer's)"}`, { cause: 'http', route, status: reply.status, ...(code ? { code } : {}) });
      }
      return reply;
    } catch (err) {
      took();
      this.recorder.error(this.name, `${route}: ${(err as Error).message}`, { cause: 'no-reply', route });
      return undefined;
    }
  }
}

/** The relay's error code; undefined for a reply that is not the relay's JSON (HAProxy's own pages). */
function errorCode(text: string): string | undefined {
  try {
    return (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}
