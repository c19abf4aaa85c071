import { RelayError } from '../../src/errors.js';

/** The RelayError code a call refuses with, or "accepted" when it does not throw. */
export function codeOf(fn: () => unknown): string {
  let result: unknown;
  try {
    result = fn();
  } catch (err) {
    if (err instanceof RelayError) return err.code;
    throw err;
  }
  // A promise would be "accepted" before it could refuse: such calls take codeOfAsync.
  if (result instanceof Promise) {
    result.catch(() => {});
    throw new Error('codeOf was given an asynchronous call; use codeOfAsync');
  }
  return 'accepted';
}

/** codeOf for an asynchronous call: the RelayError code it rejects with, or "accepted". */
export async function codeOfAsync(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
  } catch (err) {
    if (err instanceof RelayError) return err.code;
    throw err;
  }
  return 'accepted';
}
