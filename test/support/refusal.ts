import { RelayError } from '../../src/errors.js';

/** The RelayError code a call refuses with, or "accepted" when it does not throw. */
export function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof RelayError) return err.code;
    throw err;
  }
  return 'accepted';
}
