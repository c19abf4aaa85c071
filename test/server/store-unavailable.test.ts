import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { DB_FILE } from '../../src/start.js';
import type { AuditEntry } from '../../src/store/audit-store.js';
import { startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { idleSession } from '../support/session-api.js';
import { lockSqliteFile } from '../support/sqlite-locker.js';

// A running relay whose SQLite file another program locks (an sqlite3 shell left inside a
// transaction): reads go on (WAL), every write waits out the busy timeout (5 s) and is then
// answered 503 store_unavailable with a sentence, never a 500; the audit entry of a refusal
// made meanwhile waits instead of taking the relay down. Once the lock goes, the same
// requests succeed and nothing is missing: not the card, not its answer, not an audit entry.

let fake: AnthropicServer;
let relay: TestRelay;
beforeAll(async () => {
  fake = await startAnthropicServer({ model: () => ({ text: 'Done.' }) });
  relay = await startTestRelay({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h' });
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
});

const LOCKED = {
  error: { code: 'store_unavailable', message: 'The database is locked by another program (SQLite: database is locked); nothing was changed, try again in a moment.' },
};
const question = { questions: [{ text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] };

describe('the SQLite file locked by another program while the relay runs', { timeout: 90_000 }, () => {
  it('writes are 503 store_unavailable, reads go on, and after the lock everything goes through with nothing lost', async () => {
    const session: Session = await idleSession(relay, { prompt: 'hello' });
    const agent = relay.sessions.agentToken(session.id);
    const approval = await relay.relay.create({ sessionId: session.id, kind: 'approval', tool: 'ExitPlanMode', provider: 'claude', questions: [{ text: 'Go ahead?', options: ['Yes', 'No'] }] });
    const created = await relay.api('/api/cards', { method: 'POST', json: question });
    expect(created.status).toBe(201);
    const card = (await created.json()) as Card;

    const lock = await lockSqliteFile(join(relay.dataDir, DB_FILE));
    let released = false;
    try {
      // A refusal needs no write to answer; its audit entry, written after the turn, waits.
      const refused = await fetch(new URL(`/api/cards/${approval.id}/answer`, relay.url), {
        method: 'POST',
        headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' },
        body: JSON.stringify({ answers: { q1: { selected: ['Yes'] } } }),
      });
      expect(refused.status).toBe(403);

      const ask = await relay.api('/api/cards', { method: 'POST', json: { ...question, title: 'Asked while locked' } });
      expect([ask.status, await ask.json()]).toEqual([503, LOCKED]);
      const answer = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['SQLite'] } } } });
      expect([answer.status, await answer.json()]).toEqual([503, LOCKED]);

      const read = await relay.api(`/api/cards/${card.id}`);
      expect(read.status).toBe(200);
      expect(((await read.json()) as Card).status).toBe('pending');
      await lock.release();
      released = true;
    } finally {
      if (!released) await lock.release();
    }

    // The same requests again: they go through, and the refusal's entry is in the log.
    const again = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['SQLite'] } } } });
    expect(again.status).toBe(200);
    expect(((await again.json()) as Card).answer).toEqual({ q1: { selected: ['SQLite'] } });
    const asked = await relay.api('/api/cards', { method: 'POST', json: { ...question, title: 'Asked while locked' } });
    expect(asked.status).toBe(201);
    const listed = ((await (await relay.api('/api/cards?status=pending')).json()) as { cards: Card[] }).cards.map((c) => c.title ?? c.id);
    expect(listed).toEqual([approval.id, 'Asked while locked']);

    const { entries } = (await (await relay.api('/api/audit')).json()) as { entries: AuditEntry[] };
    const about = (id: string) => entries.filter((e) => e.cardId === id).map((e) => [e.event, e.actor.id]);
    expect(about(approval.id)).toEqual([
      ['card.created', 'relay'],
      ['card.refused', session.id],
    ]);
    expect(about(card.id)).toEqual([
      ['card.created', 'operator'],
      ['card.answered', 'operator'],
    ]);
    expect(await (await relay.api('/api/audit/verify')).json()).toMatchObject({ ok: true, problems: [] });
  });
});
