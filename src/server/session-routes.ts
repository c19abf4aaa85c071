import { Hono } from 'hono';
import { SessionMessageSchema, StartSessionSchema } from '../sessions/model.js';
import type { SessionManager } from '../sessions/manager.js';
import type { AuthEnv } from './auth.js';
import { readJson } from './http.js';

export function sessionRoutes(sessions: SessionManager) {
  const app = new Hono<AuthEnv>();

  app.post('/', async (c) => c.json(sessions.start(await readJson(c, StartSessionSchema)), 201));
  app.get('/', (c) => c.json({ sessions: sessions.list() }));
  app.get('/:id', (c) => c.json(sessions.get(c.req.param('id'))));
  app.post('/:id/messages', async (c) => {
    const id = c.req.param('id');
    sessions.get(id); // an unknown session is 404 before anything about the body
    const { text } = await readJson(c, SessionMessageSchema);
    return c.json(sessions.message(id, text));
  });
  app.delete('/:id', async (c) => c.json(await sessions.stop(c.req.param('id'))));

  return app;
}
