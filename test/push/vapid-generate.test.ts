import webpush from 'web-push';
import { describe, expect, it } from 'vitest';
import { generateVapidKeys } from '../../src/push/vapid-keys.js';

// The relay makes its VAPID pair with node:crypto (so web-push loads only to send); web-push
// itself must take the pair as one of its own.

describe('generateVapidKeys', () => {
  it('gives pairs web-push takes: a 65-byte public point and a 32-byte private key, even one with leading zeros', () => {
    let shortest = 32;
    for (let i = 0; i < 2000; i++) {
      const { publicKey, privateKey } = generateVapidKeys();
      const pub = Buffer.from(publicKey, 'base64url');
      const priv = Buffer.from(privateKey, 'base64url');
      expect(pub.length).toBe(65);
      expect(pub[0]).toBe(4);
      expect(priv.length).toBe(32);
      if (priv[0] === 0) shortest = Math.min(shortest, 31);
      expect(() => webpush.getVapidHeaders('https://push.example', 'mailto:ops@example.org', publicKey, privateKey, 'aes128gcm')).not.toThrow();
    }
    // 2,000 keys hold one with a leading zero byte with near certainty (1 - (255/256)^2000).
    expect(shortest).toBe(31);
  });
});
