import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { RelayError } from '../errors.js';
import { SessionMessageSchema } from '../sessions/model.js';
import type { CardAccess } from '../relay/card-access.js';
import type { SessionManager } from '../sessions/manager.js';
import { operatorOnly, type AuthEnv } from './auth.js';
import { readJson } from './http.js';

export const SessionPatchSchema = z.object({ agentsMayAnswer: z.boolean() }).strict();

// The operator runs sessions (a person's token may answer their cards, not run them); an agent token may read its own session and the sessions the
// human let it watch (others are 404). Agents start and watch sessions through the relay
// tool, which asks the human first.
export function sessionRoutes(sessions: SessionManager, access: CardAccess) {
  const app = new Hono<AuthEnv>();

  const visible = async (c: Context<AuthEnv>, id: string) => {
    const session = await sessions.get(id); // an unknown session is 404 either way
    if (await access.canSeeSession(c.get('principal'), id)) return session;
    throw new RelayError('not_found', `No session "${id}".`);
  };

  app.post('/', operatorOnly, async (c) => c.json(await sessions.start(await readJson(c, sessions.startSchema)), 201));
  app.get('/', async (c) => c.json({ sessions: await access.visibleSessions(c.get('principal'), await sessions.list()) }));
  app.get('/:id', async (c) => c.json(await visible(c, c.req.param('id'))));
  app.patch('/:id', operatorOnly, async (c) => {
    const id = c.req.param('id');
    await sessions.get(id); // an unknown session is 404 before anything about the body
    const { agentsMayAnswer } = await readJson(c, SessionPatchSchema);
    return c.json(await sessions.setAgentsMayAnswer(id, agentsMayAnswer, c.get('principal')));
  });
  app.post('/:id/messages', operatorOnly, async (c) => {
    const id = c.req.param('id');
    await sessions.get(id); // an unknown session is 404 before anything about the body
    const { text } = await readJson(c, SessionMessageSchema);
    return c.json(await sessions.message(id, text));
  });
  app.delete('/:id', operatorOnly, async (c) => c.json(await sessions.stop(c.req.param('id'))));

  return app;
}
