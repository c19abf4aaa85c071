import { Hono } from 'hono';
import { z } from 'zod';
import { RelayError } from '../errors.js';
import { parseHead } from '../store/audit-chain.js';
import type { AsyncAuditStore } from '../store/audit-store.js';
import { humanOnly, operatorOnly, type AuthEnv } from './auth.js';

export const AuditPageQuerySchema = z.object({
  after: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().positive().max(10_000).optional(),
});

// The audit log, for the operator only (it names every card, restricted ones included): GET
// /api/audit pages through it oldest first (`after` = the last seq seen); GET
// /api/audit/verify checks its hash chain, and with `head=SEQ:HASH` that the log still holds
// a head pinned earlier. GET /api/audit/head, the last entry's {seq, hash} (the head to pin,
// which names no card), is any human's.
export function auditRoutes(audit: AsyncAuditStore) {
  const app = new Hono<AuthEnv>();
  app.use('*', humanOnly);

  app.get('/', operatorOnly, async (c) => {
    const page = AuditPageQuerySchema.safeParse(c.req.query());
    if (!page.success) throw new RelayError('invalid_request', 'after must be a whole number (a seq) and limit a positive whole number up to 10000.');
    const limit = page.data.limit ?? 1000;
    const entries = await audit.list(page.data.after ?? 0, limit);
    return c.json({ entries, ...(entries.length === limit ? { next: entries.at(-1)!.seq } : {}) });
  });

  app.get('/head', async (c) => c.json(await audit.head()));

  app.get('/verify', operatorOnly, async (c) => {
    const raw = c.req.query('head');
    if (raw === undefined) return c.json(await audit.verify());
    const pin = parseHead(raw);
    if (!pin) throw new RelayError('invalid_request', 'head must be SEQ:HASH as GET /api/audit/head gives it: a sequence number, a colon and 64 hex digits.');
    return c.json(await audit.verify(pin));
  });

  return app;
}
