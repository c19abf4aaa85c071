import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

// Every comparison of a secret someone sends (a bearer token, a webhook signature, a signed
// button) goes through here. Both sides are first made into HMAC-SHA256 digests under a key
// of this process: the digests are always 32 bytes, so timingSafeEqual never throws on any
// input (a non-ASCII bearer as long as the token in characters but not in bytes used to be
// a 500), and how long the comparison takes says nothing of the secret's length.

const KEY = randomBytes(32);
const digest = (value: string | Buffer) => createHmac('sha256', KEY).update(value).digest();

/** True when `given` is exactly `expected` (strings as UTF-8), in time that depends on neither. */
export function sameSecret(given: string | Buffer, expected: string | Buffer): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}
