import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { RelayError } from '../errors.js';
import { endpointProblem } from '../push/endpoint-policy.js';
import { MAX_SUBSCRIPTIONS_PER_PRINCIPAL } from '../push/push-config.js';
import { EndpointSchema, PushSubscriptionSchema } from '../push/subscription-schema.js';
import type { AsyncPushSubscriptionStore } from '../store/push-subscription-store.js';
import { humanOnly, type AuthEnv } from './auth.js';
import { describeIssues, readJson } from './http.js';

export interface PushRoutesOptions {
  /** The VAPID public key (base64url) the page passes as applicationServerKey. */
  publicKey: string;
  subscriptions: AsyncPushSubscriptionStore;
  /** ASKRELAY_PUSH_ALLOW_PRIVATE: endpoints on loopback and private addresses (tests, local setups). */
  allowPrivate?: boolean;
}

// Web Push for the human only (an agent token gets 403): the page reads the key, then
// stores (POST) or removes (DELETE) the browser's subscription.
export function pushRoutes({ publicKey, subscriptions, allowPrivate = false }: PushRoutesOptions) {
  const app = new Hono<AuthEnv>();
  app.use('*', humanOnly);

  app.get('/key', (c) => c.json({ publicKey }));

  app.post('/subscriptions', async (c) => {
    const subscription = await readValid(c, PushSubscriptionSchema, 'a PushSubscription');
    const problem = endpointProblem(subscription.endpoint, allowPrivate);
    if (problem) throw new RelayError('invalid_subscription', `Expected a PushSubscription: endpoint: ${problem}.`);
    // A person's browser gets the cards routed to them (docs/routing.md); the operator's, everyone's.
    const who = c.get('principal').id;
    const cap = MAX_SUBSCRIPTIONS_PER_PRINCIPAL;
    const added = await subscriptions.add({ endpoint: subscription.endpoint, keys: subscription.keys, ...(who !== 'operator' ? { who } : {}) }, Date.now(), cap);
    if (added.full) {
      throw new RelayError('too_many_subscriptions', `You have ${cap} push subscriptions already, the most one token may hold; remove one (DELETE /api/push/subscriptions) before adding another.`);
    }
    return c.json({ endpoint: subscription.endpoint, created: added.created }, added.created ? 201 : 200);
  });

  app.delete('/subscriptions', async (c) => {
    const { endpoint } = await readValid(c, EndpointSchema, '{endpoint}');
    if (!(await subscriptions.remove(endpoint))) throw new RelayError('not_found', 'No push subscription with that endpoint.');
    return c.json({ ok: true, endpoint });
  });

  return app;
}

/** Malformed JSON stays 400; well-formed JSON of the wrong shape is 422 invalid_subscription. */
async function readValid<S extends z.ZodType>(c: Context, schema: S, what: string): Promise<z.infer<S>> {
  const body = await readJson(c, z.unknown());
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new RelayError('invalid_subscription', `Expected ${what}: ${describeIssues(parsed.error)}.`);
  return parsed.data;
}
