import fc from 'fast-check';
import { afterAll, afterEach, beforeEach, expect } from 'vitest';
import { errorTable } from '../../src/errors.js';

// What every fuzz property shares: how many cases it runs, the generators of hostile text,
// and the checks of a refusal. A property runs FUZZ_RUNS cases (2,000 in `npm test`;
// `FUZZ_RUNS=10000 npx vitest run test/fuzz` for a longer hunt). fast-check prints the
// seed and the shrunk input of a failure; `FUZZ_SEED=<seed>` replays it.

export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 2000);
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

/**
 * With FUZZ_REPORT=1, prints each property's case count and its slowest case when the file
 * ends. @fast-check/vitest runs beforeEach/afterEach around every case, so each is timed.
 */
export function reportSlowestCases(): void {
  if (process.env.FUZZ_REPORT !== '1') return;
  const cases = new Map<string, { count: number; slowestMs: number }>();
  let started = 0;
  beforeEach(() => {
    started = performance.now();
  });
  afterEach(() => {
    const name = expect.getState().currentTestName ?? '?';
    const entry = cases.get(name) ?? { count: 0, slowestMs: 0 };
    cases.set(name, { count: entry.count + 1, slowestMs: Math.max(entry.slowestMs, performance.now() - started) });
  });
  afterAll(() => {
    for (const [name, { count, slowestMs }] of cases) console.log(`fuzz: ${count} cases, slowest ${slowestMs.toFixed(1)} ms — ${name}`);
  });
}

/** fast-check parameters for one property; the generous timeout is for 10,000 cases over HTTP. */
export const runs = (): { numRuns: number; seed?: number } => ({ numRuns: FUZZ_RUNS, ...(seed !== undefined ? { seed } : {}) });
export const FUZZ_TIMEOUT_MS = Math.max(120_000, FUZZ_RUNS * 60);

/** Names JavaScript objects already carry: where a lookup by a user's key goes wrong. */
export const PROTO_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype', '__defineGetter__'];

/** Characters that look like nothing or reorder what is shown. */
export const INVISIBLE = ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u202e', '\u202d', '\u2066', '\u2069', '\u00ad', '\u180e'];

const SEPARATORS = [',', ';', '\n', '\r\n', ':', '=', ' ', '\t', ', ', ' : '];

/** Text an attacker or a confused agent might send: ordinary, empty, invisible, odd, or long. */
export const hostileText = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
    { weight: 2, arbitrary: fc.constantFrom(...PROTO_NAMES, 'Other', 'other (please specify)', '', ' ', '1', '0', '-1', '99', 'null', 'undefined', 'https://x.org/a,b', 'C:\\tmp;x', '14:30', 'sk-ant-api03-' + 'a'.repeat(40)) },
    { weight: 1, arbitrary: fc.array(fc.constantFrom(...INVISIBLE, ' '), { minLength: 1, maxLength: 6 }).map((a) => a.join('')) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom('x', ',', 'é', '😀', '\u200b'), fc.integer({ min: 100, max: 5000 })).map(([c, n]) => c.repeat(n)) },
  );

/** A plain-text reply built from a card's own words (ids, headers, labels, numbers) and hostile text. */
export const replyFrom = (words: string[]): fc.Arbitrary<string> =>
  fc
    .array(fc.oneof(fc.constantFrom(...words, '1', '2', '3', '0', '10'), hostileText(), fc.constantFrom(...SEPARATORS)), { minLength: 0, maxLength: 12 })
    .map((parts) => parts.join(''));

/** JSON values of any shape, to throw at a schema. */
export const anyJson = (): fc.Arbitrary<unknown> => fc.jsonValue({ maxDepth: 4 });

export interface Refusal {
  status: number;
  body: unknown;
}

/**
 * A relay response to anything: never a 5xx; a refusal is `{error: {code, message}}` with a
 * code from the error table whose status is the one answered.
 */
export function expectDocumentedResponse({ status, body }: Refusal): void {
  expect(status, JSON.stringify(body)).toBeLessThan(500);
  if (status < 400) return;
  expect(body).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
  const { code, message } = (body as { error: { code: string; message: string } }).error;
  expect(Object.hasOwn(errorTable, code), `code ${code} is in the error table`).toBe(true);
  expect(errorTable[code as keyof typeof errorTable], `status of ${code}`).toBe(status);
  expect(message.length).toBeGreaterThan(0);
}

/** Reads a response as {status, body}; a body that is not JSON is kept as text (and fails the checks). */
export async function responseOf(res: Response): Promise<Refusal> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    /* kept as text */
  }
  return { status: res.status, body };
}
