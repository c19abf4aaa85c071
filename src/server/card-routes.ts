import { Hono } from 'hono';
import { z } from 'zod';
import { AnswerSchema, CardInputSchema, CardStatusSchema } from '../cards/model.js';
import { RelayError } from '../errors.js';
import type { CardAccess } from '../relay/card-access.js';
import type { AuthEnv } from './auth.js';
import { readJson } from './http.js';

// `late`: the human answers a card that expired or was cancelled (docs/api.md, "Late answers").
export const AnswerBodySchema = z.object({ answers: AnswerSchema, late: z.boolean().optional() });
// `asText`: the person marked the reply as typed words, never options (docs/api.md).
export const ReplyBodySchema = z.object({ text: z.string(), asText: z.boolean().optional(), late: z.boolean().optional() });
const MAX_WAIT_SECONDS = 3600;
const FLAG = z.enum(['1', 'true', '0', 'false']).transform((v) => v === '1' || v === 'true');
// `late`: wait past an expiry for a late answer; `client=ask`: the poller is `askrelay ask` (its delivery says so).
export const WaitQuerySchema = z.object({
  timeout: z.coerce.number().min(0).max(MAX_WAIT_SECONDS).optional(),
  late: FLAG.optional(),
  client: z.enum(['ask']).optional(),
});
export const ListQuerySchema = z.object({
  status: CardStatusSchema.optional(),
  sessionId: z.string().min(1).optional(),
  limit: z.coerce.number().int().positive().max(10_000).optional(),
  order: z.enum(['oldest', 'newest']).optional(),
});

/** Cards in one list unless `limit` asks for more (up to 10,000): a history can be long. */
export const DEFAULT_PAGE_SIZE = 500;

const idempotencyKey = (header: string | undefined) => header?.trim() || undefined;

function waitTimeout(raw: string | undefined): number {
  const seconds = WaitQuerySchema.shape.timeout.safeParse(raw);
  if (!seconds.success) throw new RelayError('invalid_request', `timeout must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}.`);
  return seconds.data ?? 30;
}

// Every route reads and answers through CardAccess as the caller (the human or a session's
// agent), so an agent sees only what it may (404 otherwise) and is refused what it may not.
export function cardRoutes(access: CardAccess) {
  const app = new Hono<AuthEnv>();

  app.post('/', async (c) => {
    const input = await readJson(c, CardInputSchema);
    return c.json(await access.create(c.get('principal'), input), 201);
  });

  app.get('/', async (c) => {
    const query = ListQuerySchema.safeParse(c.req.query());
    if (!query.success) {
      throw new RelayError('invalid_request', `status must be one of ${CardStatusSchema.options.join(', ')}; limit a positive whole number; order oldest or newest.`);
    }
    // One card more than the page holds tells whether there are more. An agent sees only
    // some cards, so its page is cut after they are picked, not before.
    const { limit = DEFAULT_PAGE_SIZE, ...filter } = query.data;
    const who = c.get('principal');
    const cards = await access.list(who, who.kind === 'human' ? { ...filter, limit: limit + 1 } : filter);
    return c.json({ cards: cards.slice(0, limit), hasMore: cards.length > limit });
  });

  app.get('/:id', async (c) => c.json(await access.get(c.get('principal'), c.req.param('id'))));

  app.post('/:id/answer', async (c) => {
    const id = c.req.param('id');
    const who = c.get('principal');
    const body = await readJson(c, AnswerBodySchema).catch(async (err: unknown) => {
      await access.get(who, id, 'answer'); // an unknown card is 404 before anything about the body
      throw err;
    });
    return c.json(await access.answer(who, id, body.answers, idempotencyKey(c.req.header('idempotency-key')), { late: body.late }));
  });

  // What a person typed, read with the plain-text rules (reply-parser.ts), then answered
  // exactly like /answer.
  app.post('/:id/reply', async (c) => {
    const id = c.req.param('id');
    const who = c.get('principal');
    const body = await readJson(c, ReplyBodySchema).catch(async (err: unknown) => {
      await access.get(who, id, 'answer'); // an unknown card is 404 before anything about the body
      throw err;
    });
    return c.json(await access.reply(who, id, body.text, idempotencyKey(c.req.header('idempotency-key')), { asText: body.asText, late: body.late }));
  });

  app.post('/:id/skip', async (c) => c.json(await access.skip(c.get('principal'), c.req.param('id'))));

  app.get('/:id/wait', async (c) => {
    const id = c.req.param('id');
    const seconds = waitTimeout(c.req.query('timeout'));
    const query = WaitQuerySchema.omit({ timeout: true }).safeParse({ late: c.req.query('late'), client: c.req.query('client') });
    if (!query.success) throw new RelayError('invalid_request', 'late takes 1, true, 0 or false; client takes "ask".');
    const revoked = c.get('revoked');
    const signal = revoked ? AbortSignal.any([c.req.raw.signal, revoked]) : c.req.raw.signal;
    const card = await access.wait(c.get('principal'), id, seconds * 1000, { signal, ...query.data });
    // Revoked while it waited: what it waited for is no longer its to see. Checked again before
    // a card goes out, since another node may not have heard of a revocation yet.
    if (revoked?.aborted || (card && !(await c.get('credential').stillValid()))) throw new RelayError('unauthorized', 'Your access was revoked while you waited (the person was removed, the login ended or the session stopped).');
    return card ? c.json(card) : c.body(null, 204);
  });

  return app;
}
