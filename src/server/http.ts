import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { RelayError, storeUnavailable } from '../errors.js';

export const BODY_LIMIT = 64 * 1024;

/** Reads a JSON body of at most BODY_LIMIT bytes and checks it against a schema. */
export async function readJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  // A browser sends text/plain (and form types) from any page without asking first; only
  // application/json needs the CORS preflight the relay never grants.
  if (!isJsonType(c.req.header('content-type'))) {
    throw new RelayError('unsupported_media_type', 'Send the body as JSON, with "Content-Type: application/json".');
  }
  const text = (await readLimited(c.req.raw)).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new RelayError('malformed_json', `The body is not valid JSON: ${(err as Error).message}`);
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new RelayError('invalid_request', describeIssues(parsed.error));
  return parsed.data;
}

/** application/json, with or without parameters such as charset. */
export function isJsonType(header: string | undefined): boolean {
  return header?.split(';', 1)[0].trim().toLowerCase() === 'application/json';
}

/** "64 KB", "1 MB": a byte count as the messages say it. */
const sizeText = (bytes: number) => (bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : `${Math.round(bytes / 1024)} KB`);

const tooLarge = (limit = BODY_LIMIT) => new RelayError('body_too_large', `The body is larger than ${sizeText(limit)}.`);

/**
 * A request's body, at most `limit` bytes, the one way every route reads one: a declared
 * Content-Length over the limit is refused before a byte is read (and Node stops a declared
 * body at its length); a chunked body is counted as it arrives and refused the moment it
 * passes the limit, the rest never read, so a sender of an endless body gets its 413 at once.
 * Throws RelayError body_too_large.
 */
export async function readLimited(request: Request, limit = BODY_LIMIT): Promise<Buffer> {
  const declared = request.headers.get('content-length');
  if (declared !== null && !request.headers.has('transfer-encoding')) {
    if (Number(declared) > limit) throw tooLarge(limit);
    // Read straight from Node's request: skips the web-stream plumbing (a measurable share of every request).
    return Buffer.from(await request.arrayBuffer());
  }
  if (!request.body) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * readLimited for a route that answers a refusal in its own shape (a chat platform's, or
 * JSON-RPC's): the body, or what `refuse` makes of the body_too_large error.
 */
export async function readLimitedOr<T>(request: Request, limit: number, refuse: (err: RelayError) => T): Promise<Buffer | T> {
  try {
    return await readLimited(request, limit);
  } catch (err) {
    if (err instanceof RelayError) return refuse(err);
    throw err;
  }
}

/** One readable sentence from a zod error: the first problem, with its path. */
export function describeIssues(error: z.ZodError): string {
  const issue = error.issues[0];
  const path = issue.path.length ? issue.path.join('.') : 'the body';
  return `${path}: ${issue.message}`;
}

export function sendError(c: Context, err: unknown) {
  if (err instanceof RelayError) return c.json(err.toJSON(), err.status as ContentfulStatusCode);
  const away = storeUnavailable(err);
  if (away) return c.json(away.toJSON(), 503);
  // Reported by the app's error handler (the log); the caller learns only that it happened.
  return c.json({ error: { code: 'internal', message: 'The relay hit an unexpected error; see its log.' } }, 500);
}
