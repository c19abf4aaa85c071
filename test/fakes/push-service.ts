import { createDecipheriv, createECDH, createPublicKey, hkdfSync, randomBytes, verify, type ECDH } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { listen } from './fake-http.js';

// A push service on loopback, and a browser's side of a subscription, written from the
// RFCs rather than from web-push: RFC 8030 (the push request), RFC 8291 + 8188 (aes128gcm
// message encryption), RFC 8292 (VAPID). Tests decrypt what the relay sent with the
// subscription's own private key, exactly as a browser would.

export interface PushRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** How the service answers one request: a status, or never (the request hangs). */
export type Reply = number | 'hang';

export interface FakePushService {
  base: string;
  requests: PushRequest[];
  /** Replies for the next requests to `path`, in order; afterwards 201. */
  script(path: string, replies: Reply[]): void;
  close(): Promise<void>;
}

export async function startFakePushService(): Promise<FakePushService> {
  const requests: PushRequest[] = [];
  const scripts = new Map<string, Reply[]>();
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    requests.push({ path, headers: req.headers, body: Buffer.concat(chunks) });
    const reply = scripts.get(path)?.shift() ?? 201;
    if (reply === 'hang') return;
    res.writeHead(reply, reply === 201 ? { location: `${path}/messages/${requests.length}` } : {}).end();
  });
  const { base, close } = await listen(server);
  return { base, requests, script: (path, replies) => scripts.set(path, [...replies]), close };
}

/** A browser's subscription: its ECDH P-256 key pair and auth secret, as PushSubscription.toJSON(). */
export interface BrowserSubscription {
  json: { endpoint: string; keys: { p256dh: string; auth: string } };
  ecdh: ECDH;
  auth: Buffer;
}

export function browserSubscription(endpoint: string): BrowserSubscription {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const auth = randomBytes(16);
  return {
    json: { endpoint, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') } },
    ecdh,
    auth,
  };
}

/** RFC 8291 §3 + RFC 8188 §2: one aes128gcm record, decrypted with the subscription's keys. */
export function decryptPush(body: Buffer, sub: BrowserSubscription): Buffer {
  const salt = body.subarray(0, 16);
  const rs = body.readUInt32BE(16);
  const idlen = body[20];
  if (idlen !== 65) throw new Error(`keyid is ${idlen} bytes, not the 65 of an uncompressed P-256 point`);
  const asPublic = body.subarray(21, 21 + idlen);
  const ciphertext = body.subarray(21 + idlen);
  if (asPublic[0] !== 4) throw new Error('keyid is not an uncompressed point');
  if (ciphertext.length > rs) throw new Error(`one record expected: ${ciphertext.length} bytes exceed rs ${rs}`);

  const ecdhSecret = sub.ecdh.computeSecret(asPublic);
  const keyInfo = Buffer.concat([Buffer.from('WebPush: info\0'), sub.ecdh.getPublicKey(), asPublic]);
  const ikm = Buffer.from(hkdfSync('sha256', ecdhSecret, sub.auth, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: aes128gcm\0'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, Buffer.from('Content-Encoding: nonce\0'), 12));

  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(ciphertext.subarray(-16));
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, -16)), decipher.final()]);
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Error(`the last record must end with delimiter 0x02, found ${padded[end]}`);
  return padded.subarray(0, end);
}

export interface VapidClaims {
  aud: string;
  exp: number;
  sub: string;
}

/** RFC 8292: `vapid t=<JWT>, k=<public key>`; checks the ES256 signature against k. */
export function verifyVapid(authorization: string | undefined): { claims: VapidClaims; publicKey: string } {
  const match = /^vapid t=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization ?? '');
  if (!match) throw new Error(`not a VAPID Authorization header: ${authorization}`);
  const [, jwt, k] = match;
  const [head, payload, signature] = jwt.split('.');
  const header = JSON.parse(Buffer.from(head, 'base64url').toString('utf8'));
  if (header.alg !== 'ES256') throw new Error(`JWT alg is ${header.alg}, not ES256`);
  const point = Buffer.from(k, 'base64url');
  if (point.length !== 65 || point[0] !== 4) throw new Error('k is not an uncompressed P-256 point');
  const key = createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') },
    format: 'jwk',
  });
  const valid = verify('sha256', Buffer.from(`${head}.${payload}`), { key, dsaEncoding: 'ieee-p1363' }, Buffer.from(signature, 'base64url'));
  if (!valid) throw new Error('the VAPID JWT signature does not verify with k');
  return { claims: JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as VapidClaims, publicKey: k };
}
