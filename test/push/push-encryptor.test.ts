import webpush from 'web-push';
import { describe, expect, it } from 'vitest';
import { PushEncryptor, type EncryptRequest } from '../../src/push/push-encryptor.js';
import { browserSubscription, decryptPush } from '../fakes/push-service.js';

// Push encryption on a worker thread (src/push/push-encryptor.ts): the bodies decrypt as a
// browser decrypts them, the main thread encrypts nothing while the worker runs, and what a
// lost worker held is encrypted on the main thread instead.

const here = (calls: EncryptRequest[]) => (item: EncryptRequest) => {
  calls.push(item);
  return new Uint8Array(webpush.encrypt(item.p256dh, item.auth, item.json, 'aes128gcm').cipherText);
};

function subscriptions(n: number) {
  return Array.from({ length: n }, (_, i) => browserSubscription(`https://push.example/${i}`));
}

describe('push encryption on a worker', () => {
  it('encrypts a batch on the worker; each body decrypts with its subscription\'s keys', async () => {
    const calls: EncryptRequest[] = [];
    const encryptor = new PushEncryptor(here(calls), () => {});
    try {
      const subs = subscriptions(20);
      const bodies = await Promise.all(subs.map((sub, i) => encryptor.encrypt({ ...sub.json.keys, json: JSON.stringify({ n: i }) })));
      bodies.forEach((body, i) => expect(JSON.parse(decryptPush(Buffer.from(body), subs[i]).toString('utf8'))).toEqual({ n: i }));
      expect(calls).toEqual([]); // nothing on the main thread
    } finally {
      encryptor.stop();
    }
  });

  it('a key that cannot be used rejects that push alone', async () => {
    const encryptor = new PushEncryptor(here([]), () => {});
    try {
      const [good] = subscriptions(1);
      const [ok, bad] = await Promise.allSettled([
        encryptor.encrypt({ ...good.json.keys, json: '{}' }),
        encryptor.encrypt({ p256dh: 'bm90IGEga2V5', auth: good.json.keys.auth, json: '{}' }),
      ]);
      expect(ok.status).toBe('fulfilled');
      expect(bad).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/^could not encrypt the push: /) } });
    } finally {
      encryptor.stop();
    }
  });

  it('after stop (or without a worker) the main thread encrypts, and nothing is lost', async () => {
    const calls: EncryptRequest[] = [];
    const encryptor = new PushEncryptor(here(calls), () => {});
    encryptor.stop();
    const [sub] = subscriptions(1);
    const body = await encryptor.encrypt({ ...sub.json.keys, json: '{"late":true}' });
    expect(JSON.parse(decryptPush(Buffer.from(body), sub).toString('utf8'))).toEqual({ late: true });
    expect(calls).toHaveLength(1);
  });
});
