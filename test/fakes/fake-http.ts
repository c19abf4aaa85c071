import { randomBytes } from 'node:crypto';
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
