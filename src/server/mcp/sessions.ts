import { randomUUID } from 'node:crypto';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { Principal } from '../../relay/access.js';
import type { Clock } from '../../relay/clock.js';
import { VERSION } from '../../version.js';

// The MCP sessions of one route (Mcp-Session-Id): each is one SDK Server on one transport,
// kept in memory, and closed after `idleMs` without requests or running calls. Stateful so
// that notifications/cancelled reaches the call it cancels.

/** A running tools/call as the HTTP side sees it. */
export interface CallRequest {
  /** Aborted when the HTTP request carrying the call goes away. */
  gone: AbortController;
  /** Whether the HTTP response carrying its result was written in full. */
  delivered?: Promise<boolean>;
}

export interface McpSession {
  id?: string;
  /** Who opened the session; every later request must come from the same caller. */
  caller: Principal;
  server: Server;
  transport: WebStandardStreamableHTTPServerTransport;
  lastSeen: number;
  /** Running tools/calls. */
  active: number;
  closed: boolean;
  /** Per running tools/call, by requestKey. */
  requests: Map<string, CallRequest>;
  /** The arguments of the ask_user calls waiting here, and how many wait on each (see holdSlot). */
  asking: Map<string, number>;
}

export const requestKey = (id: string | number) => `${typeof id}:${id}`;

/** The sweep looks at least this often, so that a long idle time still closes in time. */
const SWEEP_MS = 10 * 60 * 1000;

/**
 * Each SDK Server makes its own Ajv (for form elicitation, which the relay never sends)
 * unless given one: about 17 KB of heap per session (docs/performance.md, 10,000 waiters).
 * Every session shares this one.
 */
let validator: Promise<jsonSchemaValidator> | undefined;
const sharedValidator = () =>
  (validator ??= import('@modelcontextprotocol/sdk/validation/ajv').then(({ AjvJsonSchemaValidator }) => new AjvJsonSchemaValidator()));

export class McpSessions {
  private readonly table = new Map<string, McpSession>();

  constructor(
    /** The relay's clock, so that tests move it by hand; the sweep runs as long as the process. */
    private readonly clock: Clock,
    private readonly idleMs: number,
    /** Sets the new session's request handlers (tools/list, tools/call). */
    private readonly serve: (session: McpSession) => void | Promise<void>,
  ) {
    const sweep = () => {
      const now = clock.now();
      for (const session of this.table.values()) {
        if (session.active === 0 && now - session.lastSeen > idleMs) void session.server.close();
      }
      clock.setTimer(sweep, Math.min(idleMs, SWEEP_MS));
    };
    clock.setTimer(sweep, Math.min(idleMs, SWEEP_MS));
  }

  /** The caller's open session of this id; another caller's session does not exist for it. */
  find(id: string, caller: Principal): McpSession | undefined {
    const known = this.table.get(id);
    return known && known.caller.id === caller.id ? known : undefined;
  }

  /** A new session; it is kept once its transport hands out an id (on initialize). */
  async open(caller: Principal): Promise<McpSession> {
    // The SDK loads with the first session: a relay no MCP client uses holds none of it.
    const [{ Server }, { WebStandardStreamableHTTPServerTransport }] = await Promise.all([
      import('@modelcontextprotocol/sdk/server/index.js'),
      import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    ]);
    const server = new Server({ name: 'askrelay', version: VERSION }, { capabilities: { tools: {} }, jsonSchemaValidator: await sharedValidator() });
    const session: McpSession = {
      caller,
      server,
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          session.id = id;
          this.table.set(id, session);
        },
      }),
      lastSeen: this.clock.now(),
      active: 0,
      closed: false,
      requests: new Map(),
      asking: new Map(),
    };
    server.onclose = () => {
      session.closed = true;
      if (session.id) this.table.delete(session.id);
    };
    await this.serve(session);
    await server.connect(session.transport);
    return session;
  }
}
