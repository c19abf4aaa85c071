import { Hono } from 'hono';
import { z } from 'zod';
import { AnswerSchema, CardInputSchema, CardStatusSchema } from '../cards/model.js';
import { parseReply } from '../cards/reply-parser.js';
import { RelayError } from '../errors.js';
import type { Relay } from '../relay/relay.js';
import type { AuthEnv } from './auth.js';
import { readJson } from './http.js';

const AnswerBodySchema = z.object({ answers: AnswerSchema });
const ReplyBodySchema = z.object({ text: z.string() });
const ListQuerySchema = z.object({
  status: CardStatusSchema.optional(),
  sessionId: z.string().min(1).optional(),
  limit: z.coerce.number().int().positive().max(10_000).optional(),
  order: z.enum(['oldest', 'newest']).optional(),
});

const MAX_WAIT_SECONDS = 3600;

function waitTimeout(raw: string | undefined): number {
  if (raw === undefined) return 30;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds < 0 || seconds > MAX_WAIT_SECONDS) {
    throw new RelayError('invalid_request', `timeout must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}.`);
  }
  return seconds;
}

export function cardRoutes(relay: Relay) {
  const app = new Hono<AuthEnv>();
  const human = (surface: string) => ({ kind: 'human' as const, id: 'operator', surface });

  app.post('/', async (c) => {
    const input = await readJson(c, CardInputSchema);
    return c.json(relay.create(input), 201);
  });

  app.get('/', (c) => {
    const query = ListQuerySchema.safeParse(c.req.query());
    if (!query.success) {
      throw new RelayError('invalid_request', `status must be one of ${CardStatusSchema.options.join(', ')}; limit a positive whole number; order oldest or newest.`);
    }
    return c.json({ cards: relay.list(query.data) });
  });

  app.get('/:id', (c) => c.json(relay.get(c.req.param('id'))));

  app.post('/:id/answer', async (c) => {
    const id = c.req.param('id');
    const body = await readJson(c, AnswerBodySchema).catch((err: unknown) => {
      relay.get(id); // an unknown card is 404 before anything about the body
      throw err;
    });
    const key = c.req.header('idempotency-key')?.trim() || undefined;
    return c.json(relay.answer(id, body.answers, { idempotencyKey: key, by: human(c.get('surface')) }));
  });

  // What a person typed, read with the plain-text rules (reply-parser.ts), then answered
  // exactly like /answer.
  app.post('/:id/reply', async (c) => {
    const id = c.req.param('id');
    const body = await readJson(c, ReplyBodySchema).catch((err: unknown) => {
      relay.get(id); // an unknown card is 404 before anything about the body
      throw err;
    });
    const card = relay.get(id);
    const by = human(c.get('surface'));
    const key = c.req.header('idempotency-key')?.trim() || undefined;
    // A closed card refuses (410) before its text is read; relay.answer says so.
    if (card.status !== 'pending' && card.status !== 'answered') return c.json(relay.answer(id, {}, { by }));
    return c.json(relay.answer(id, parseReply(card, body.text), { idempotencyKey: key, by }));
  });

  app.post('/:id/skip', (c) => c.json(relay.skip(c.req.param('id'), human(c.get('surface')))));

  app.get('/:id/wait', async (c) => {
    const id = c.req.param('id');
    const seconds = waitTimeout(c.req.query('timeout'));
    const card = await relay.wait(id, seconds * 1000, c.req.raw.signal);
    return card ? c.json(card) : c.body(null, 204);
  });

  return app;
}
