import { randomBytes } from 'node:crypto';
import { pathToFileURL } from 'node:url';
import type { IncomingHttpHeaders, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// The HTTP plumbing every scripted model server shares: the request log, listening on a
// loopback port, closing, and a few small helpers. Each server keeps only its own wire format.

export interface LoggedRequest {
  method: string;
  /** The path without the query, e.g. `/v1/messages`. */
  path: string;
  /** The query string with its `?`, e.g. `?beta=true`, or `''`. */
  query: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON; `undefined` for an empty body, the raw text when it is not JSON. */
  body: any;
}

/** Reads a whole request into a log entry; `bodyIsJson` tells a JSON body from raw text. */
export async function readRequest(req: IncomingMessage): Promise<{ entry: LoggedRequest; url: URL; raw: string; body: any; bodyIsJson: boolean }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks).toString('utf8');
  const url = new URL(req.url ?? '/', 'http://fake');
  let body: unknown;
  let bodyIsJson = false;
  if (raw) {
    try {
      body = JSON.parse(raw);
      bodyIsJson = true;
    } catch {
      body = raw;
    }
  }
  return { entry: { method: req.method ?? '', path: url.pathname, query: url.search, headers: req.headers, body }, url, raw, body, bodyIsJson };
}

/** Listens on `port` (0: a free one) and returns the base URL and a close() that ends open streams too. */
export async function listen(server: Server, port = 0, host = '127.0.0.1'): Promise<{ base: string; close(): Promise<void> }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    base: `http://${urlHost}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Splits by code points, so no fragment ends inside a surrogate pair. Never empty. */
export function chunk(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''));
  return out.length ? out : [''];
}

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** A provider-looking id: the prefix and `length` random letters and digits. */
export function randomId(prefix: string, length: number): string {
  let out = prefix;
  for (const b of randomBytes(length)) out += ALPHABET[b % ALPHABET.length];
  return out;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * `node --import tsx test/fakes/<file>.ts [port]`: when the fake's module is the script being
 * run, serves it on the port (0: any free one), prints its URL and the variable that points a
 * client at it, logs each request on stderr, and stops on Ctrl-C.
 */
export async function serveWhenRunDirectly(
  moduleUrl: string,
  what: { file: string; title: string; variable: string },
  start: (port: number, onRequest: (r: LoggedRequest) => void) => Promise<{ url: string; close(): Promise<void> }>,
): Promise<void> {
  const script = process.argv[1];
  let direct = false;
  try {
    direct = !!script && moduleUrl === pathToFileURL(script).href;
  } catch {
    direct = false;
  }
  if (!direct) return;
  const port = Number(process.argv[2] ?? 0);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`usage: node --import tsx test/fakes/${what.file} [port]\n`);
    process.exit(2);
  }
  const server = await start(port, (r) => process.stderr.write(`${r.method} ${r.path}${r.query}\n`));
  process.stdout.write(`${server.url}\n`);
  process.stderr.write(`${what.title} at ${server.url} (${what.variable}=${server.url}); Ctrl-C stops it.\n`);
  const stop = () => void server.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** What a script answers once its steps are used up. */
export const END_OF_SCRIPT = '(end of script)';

/** One step of a scripted model: a reply, a string (a text reply), or a function of the request returning either. */
export type ScriptStepOf<Request, Reply> = Reply | string | ((request: Request, index: number) => Reply | string | Promise<Reply | string>);

/**
 * A model that plays `steps` in order, one per request; once they are used up it answers
 * `end` (a text of END_OF_SCRIPT). Each model keeps its own position: one per server.
 */
export function playSteps<Request, Reply>(steps: ScriptStepOf<Request, Reply>[], end: Reply): (request: Request, index: number) => Promise<Reply> {
  let next = 0;
  return async (request, index) => {
    const step = steps[next++];
    if (step === undefined) return end;
    const reply = typeof step === 'function' ? await (step as (r: Request, i: number) => Reply | string | Promise<Reply | string>)(request, index) : step;
    return typeof reply === 'string' ? ({ text: reply } as Reply) : reply;
  };
}
