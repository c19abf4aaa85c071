import { createECDH } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSecretFile, privateFolder } from '../store/secret-file.js';

// The relay's VAPID key pair (RFC 8292): made on first start and kept in the data folder,
// readable by the owner only. The public key is what the page hands the browser as
// applicationServerKey; changing it would orphan every stored subscription, so it is kept.

export const VAPID_FILE = 'vapid.json';

export interface VapidKeys {
  /** Uncompressed P-256 point, base64url (65 bytes). */
  publicKey: string;
  /** The private scalar, base64url (32 bytes). */
  privateKey: string;
}

export const isVapidKeys = (value: unknown): value is VapidKeys =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as VapidKeys).publicKey === 'string' &&
  typeof (value as VapidKeys).privateKey === 'string' &&
  Buffer.from((value as VapidKeys).publicKey, 'base64url').length === 65 &&
  Buffer.from((value as VapidKeys).privateKey, 'base64url').length === 32;

export function loadOrCreateVapidKeys(dataDir: string): VapidKeys {
  const file = join(dataDir, VAPID_FILE);
  if (existsSync(file)) {
    let stored: unknown;
    try {
      stored = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      // An empty or cut file (an older relay crashed while writing it) is no key pair either.
    }
    if (!isVapidKeys(stored)) throw new Error(`${file} does not hold a VAPID key pair {publicKey, privateKey}; remove it to make a new one.`);
    return { publicKey: stored.publicKey, privateKey: stored.privateKey };
  }
  const keys = generateVapidKeys();
  privateFolder(dataDir);
  // Created only when missing: two relays starting at once on one folder keep one pair.
  if (!createSecretFile(file, `${JSON.stringify(keys, null, 2)}\n`)) return loadOrCreateVapidKeys(dataDir);
  return { publicKey: keys.publicKey, privateKey: keys.privateKey };
}

/**
 * A new P-256 key pair in the form web-push's generateVAPIDKeys() gives (the 65-byte
 * uncompressed public point and the 32-byte private key, base64url without padding), made
 * with node:crypto so that the relay loads web-push only when it sends a push.
 */
export function generateVapidKeys(): VapidKeys {
  const curve = createECDH('prime256v1');
  curve.generateKeys();
  // getPrivateKey() drops leading zero bytes; the key is 32 bytes all the same.
  const privateKey = Buffer.concat([Buffer.alloc(32), curve.getPrivateKey()]).subarray(-32);
  return { publicKey: curve.getPublicKey().toString('base64url'), privateKey: privateKey.toString('base64url') };
}
