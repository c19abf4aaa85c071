import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { RelayError } from '../errors.js';

export const BODY_LIMIT = 64 * 1024;

/** Reads a JSON body of at most BODY_LIMIT bytes and checks it against a schema. */
export async function readJson<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  // A browser sends text/plain (and form types) from any page without asking first; only
  // application/json needs the CORS preflight the relay never grants.
  if (!isJsonType(c.req.header('content-type'))) {
    throw new RelayError('unsupported_media_type', 'Send the body as JSON, with "Content-Type: application/json".');
  }
  const declared = c.req.header('content-length');
  if (Number(declared ?? 0) > BODY_LIMIT) throw tooLarge();
  // With a declared length Node stops the body there, and reading it directly skips the
  // web-stream plumbing (a measurable share of every request); chunked bodies are counted.
  const text = declared !== undefined ? await c.req.text() : await readLimited(c.req.raw);
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

function tooLarge() {
  return new RelayError('body_too_large', `The body is larger than ${BODY_LIMIT / 1024} KB.`);
}

async function readLimited(request: Request): Promise<string> {
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > BODY_LIMIT) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** One readable sentence from a zod error: the first problem, with its path. */
export function describeIssues(error: z.ZodError): string {
  const issue = error.issues[0];
  const path = issue.path.length ? issue.path.join('.') : 'the body';
  return `${path}: ${issue.message}`;
}

export function sendError(c: Context, err: unknown) {
  if (err instanceof RelayError) return c.json(err.toJSON(), err.status as ContentfulStatusCode);
  console.error(err);
  return c.json({ error: { code: 'internal', message: 'The relay hit an unexpected error; see its log.' } }, 500);
}
