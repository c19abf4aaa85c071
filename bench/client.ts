// The benchmark's client side: one HTTP client (node:http with a keep-alive agent) for
// every measurement, a hand-rolled Server-Sent Events reader, percentiles, and the
// forked server process.

import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { ChildReply, ChildRequest } from './child.js';

/** Shared by the baseline and every relay request, so they pay for the same client. */
export const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

export interface Reply {
  status: number;
  text: string;
  /** performance.now() when the last byte of the body arrived. */
  at: number;
}

export interface RequestOptions {
  token?: string;
  json?: unknown;
  headers?: Record<string, string>;
  /** Another client's connections (the chaos suite's); default the shared `agent`. */
  agent?: http.Agent;
  /** Gives up (rejects) when the whole exchange takes longer. */
  timeoutMs?: number;
}

export function request(base: string, method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
  const body = options.json === undefined ? undefined : Buffer.from(JSON.stringify(options.json));
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (body) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(body.length);
  }
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, base), { method, agent: options.agent ?? agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), at: performance.now() });
      });
      res.on('error', reject);
    });
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => req.destroy(new Error(`no reply within ${options.timeoutMs} ms`)), options.timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(body);
  });
}

export interface SseEvent {
  event: string;
  data: string;
  /** performance.now() when the chunk that completed the event arrived. */
  at: number;
}

/** Reads `text/event-stream` off a raw response: events end at a blank line. */
export class SseClient {
  private buffer = '';
  private req?: http.ClientRequest;
  private listeners = new Set<(e: SseEvent) => void>();
  private ends = new Set<(reason: string) => void>();
  private ended = false;

  open(base: string, path: string, token: string): Promise<void> {
    return new Promise((resolve, reject) => {
      // Its own socket (agent: false): the stream stays open for the whole run.
      this.req = http.get(
        new URL(path, base),
        { agent: false, headers: { accept: 'text/event-stream', ...(token ? { authorization: `Bearer ${token}` } : {}) } },
        (res) => {
          if (res.statusCode !== 200) return reject(new Error(`SSE: HTTP ${res.statusCode}`));
          res.setEncoding('utf8');
          let connected = false;
          res.on('data', (chunk: string) => {
            const at = performance.now();
            this.buffer += chunk;
            for (let end = this.boundary(); end >= 0; end = this.boundary()) {
              const block = this.buffer.slice(0, end);
              this.buffer = this.buffer.slice(end).replace(/^(\r\n|\r|\n){2}/, '');
              const event = parseBlock(block, at);
              if (!connected) {
                connected = true;
                resolve(); // the first block is the server's greeting (retry + comment)
              }
              if (event) this.listeners.forEach((l) => l(event));
            }
          });
          res.on('end', () => this.end('the server ended the stream'));
          res.on('error', (err) => this.end(err.message));
        },
      );
      this.req.on('error', (err) => {
        if (!this.closed) reject(err);
        this.end(err.message);
      });
    });
  }

  /** Once, when an open stream ends or breaks (not after close()). */
  onEnd(listener: (reason: string) => void): void {
    this.ends.add(listener);
  }

  private end(reason: string): void {
    if (this.ended || this.closed) return;
    this.ended = true;
    this.ends.forEach((l) => l(reason));
  }

  private closed = false;

  private boundary(): number {
    const m = /(\r\n|\r|\n)(\r\n|\r|\n)/.exec(this.buffer);
    return m ? m.index : -1;
  }

  on(listener: (e: SseEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.closed = true;
    this.req?.destroy();
  }
}

function parseBlock(block: string, at: number): SseEvent | undefined {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split(/\r\n|\r|\n/)) {
    if (!line || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return data.length ? { event, data: data.join('\n'), at } : undefined;
}

export interface Stats {
  n: number;
  p50: number;
  p99: number;
  mean: number;
}

/** Nearest-rank percentiles, in milliseconds. */
export function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const rank = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
  return { n: s.length, p50: rank(50), p99: rank(99), mean: s.reduce((a, b) => a + b, 0) / s.length };
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A forked server process (bench/child.ts) driven by request/reply over IPC. */
export class Child {
  private constructor(
    private readonly proc: ChildProcess,
    readonly url: string,
    readonly token: string,
  ) {}

  static async start(args: string[], extraExecArgv: string[] = [], env: Record<string, string> = {}): Promise<Child> {
    const proc = fork(fileURLToPath(new URL('./child.ts', import.meta.url)), args, {
      execArgv: ['--expose-gc', '--import', 'tsx', ...extraExecArgv],
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const first = await nextReply(proc);
    if (!first.ok || !('url' in first)) throw new Error(`child did not start: ${JSON.stringify(first)}`);
    return new Child(proc, first.url, ('token' in first && first.token) || '');
  }

  async call<T extends ChildReply>(msg: ChildRequest): Promise<T> {
    const reply = nextReply(this.proc);
    this.proc.send(msg);
    const result = await reply;
    if (!result.ok) throw new Error(`child ${msg.cmd}: ${result.error}`);
    return result as T;
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => this.proc.once('exit', () => resolve()));
    this.proc.send({ cmd: 'exit' } satisfies ChildRequest);
    await Promise.race([exited, sleep(5000).then(() => this.proc.kill())]);
  }
}

function nextReply(proc: ChildProcess): Promise<ChildReply> {
  return new Promise((resolve, reject) => {
    const onMessage = (msg: ChildReply) => {
      proc.off('exit', onExit);
      resolve(msg);
    };
    const onExit = (code: number | null) => {
      proc.off('message', onMessage);
      reject(new Error(`child exited (${code}) before replying`));
    };
    proc.once('message', onMessage);
    proc.once('exit', onExit);
  });
}
