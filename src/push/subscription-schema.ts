import { z } from 'zod';
import { endpointProblem } from './endpoint-policy.js';

// A browser's PushSubscription.toJSON(): {endpoint, expirationTime?, keys: {p256dh, auth}}.
// The keys must be what RFC 8291 needs: p256dh an uncompressed P-256 point (65 bytes, 0x04
// first), auth a 16-byte secret, both base64url. The endpoint is https (every real push
// service), or http on a private address; whether private addresses are allowed at all is
// the relay's setting, checked by the route (endpoint-policy.ts).

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/;

const bytes = (text: string) => Buffer.from(text.replace(/=+$/, ''), 'base64url');

export const PushSubscriptionSchema = z.object({
  endpoint: z
    .string({ error: 'is required: the push service URL from PushSubscription.toJSON()' })
    .max(2048, 'is longer than 2048 characters')
    .superRefine((text, ctx) => {
      const problem = endpointProblem(text, true);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
  expirationTime: z.number().nullable().optional(),
  keys: z.object(
    {
      p256dh: z
        .string({ error: 'is required (base64url)' })
        .refine((t) => BASE64URL.test(t) && bytes(t).length === 65 && bytes(t)[0] === 4, {
          message: 'must be an uncompressed P-256 public key: 65 bytes, base64url',
        }),
      auth: z
        .string({ error: 'is required (base64url)' })
        .refine((t) => BASE64URL.test(t) && bytes(t).length === 16, { message: 'must be a 16-byte auth secret, base64url' }),
    },
    { error: 'is required: {p256dh, auth} from PushSubscription.toJSON()' },
  ),
});

export const EndpointSchema = z.object({ endpoint: z.string({ error: 'is required: the subscription endpoint to remove' }).min(1) });

