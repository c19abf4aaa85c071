import { Hono } from 'hono';
import { z } from 'zod';
import { RelayError } from '../errors.js';
import type { AsyncLoginStore } from '../store/login-store.js';
import type { AsyncPushSubscriptionStore } from '../store/push-subscription-store.js';
import { newPersonalToken, personalTokenHash, type AsyncUserStore } from '../store/user-store.js';
import { CHANNEL_IDS } from '../channels/config.js';
import { operatorOnly, type AuthEnv } from './auth.js';
import { readJson } from './http.js';
import { revocationKey, type Revocations } from './revocations.js';

// The relay's people (docs/routing.md), for the operator only: GET lists them, POST makes one
// and answers with its personal token, shown this once (only its hash is kept), DELETE removes
// one (its token and its page logins stop working at once, and what they hold open ends, on
// every node).

/** Reserved: the operator, the routes' "everyone" and chat channels, and what principals of other kinds are called. */
const RESERVED = new Set(['operator', 'everyone', 'relay', 'system', ...CHANNEL_IDS]);

export const UserNameSchema = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,31}$/, 'a name is 1-32 lowercase letters, digits, _ or -, starting with a letter')
  .refine((name) => !RESERVED.has(name), { error: `that name is reserved (${[...RESERVED].join(', ')})` });
export const NewUserSchema = z.object({ name: UserNameSchema }).strict();
/** A chat user as the channels name them: "<platform>:<user id>". */
export const LinkSchema = z
  .string()
  .regex(new RegExp(`^(${CHANNEL_IDS.join('|')}):[A-Za-z0-9_.@-]{1,64}$`), `a link is <platform>:<user id>, the platform one of ${CHANNEL_IDS.join(', ')}`);
export const NewLinkSchema = z.object({ link: LinkSchema }).strict();

const shown = (u: { name: string; createdAt: number; links?: string[] }) => ({ name: u.name, createdAt: new Date(u.createdAt).toISOString(), links: u.links ?? [] });

export function userRoutes(users: AsyncUserStore, logins: Pick<AsyncLoginStore, 'removeWho'>, revocations: Pick<Revocations, 'revoke'>, push?: Pick<AsyncPushSubscriptionStore, 'removeWho'>) {
  const app = new Hono<AuthEnv>();
  app.use('*', operatorOnly);

  app.get('/', async (c) => c.json({ users: (await users.list()).map(shown) }));

  app.post('/', async (c) => {
    const { name } = await readJson(c, NewUserSchema);
    const token = newPersonalToken();
    const now = Date.now();
    if (!(await users.add(name, personalTokenHash(token), now))) throw new RelayError('already_exists', `There is already a person called "${name}".`);
    return c.json({ ...shown({ name, createdAt: now }), token }, 201);
  });

  // A chat user linked to a person: a tap or reply of theirs is recorded as the person.
  app.post('/:name/links', async (c) => {
    const name = c.req.param('name');
    const { link } = await readJson(c, NewLinkSchema);
    if (!(await users.link(name, link))) throw new RelayError('not_found', `No person called "${name}".`);
    return c.json(shown((await users.list()).find((u) => u.name === name) ?? { name, createdAt: Date.now(), links: [link] }));
  });

  app.delete('/:name/links/:link', async (c) => {
    const { name, link } = c.req.param();
    if (!(await users.unlink(name, link))) throw new RelayError('not_found', `${name} has no link ${link}.`);
    return c.json({ ok: true, name, link });
  });

  app.delete('/:name', async (c) => {
    const name = c.req.param('name');
    if (!(await users.remove(name))) throw new RelayError('not_found', `No person called "${name}".`);
    // Their page logins end with them, and their browsers' push subscriptions (a card for
    // everyone would otherwise still reach them).
    await logins.removeWho(name);
    await push?.removeWho(name);
    await revocations.revoke([revocationKey.person(name)]);
    return c.json({ ok: true, name });
  });

  return app;
}
