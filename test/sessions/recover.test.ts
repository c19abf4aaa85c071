import Database from 'better-sqlite3';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { DB_FILE } from '../../src/start.js';
import { lastToolResult, lastUserText, startAnthropicServer, type AnthropicServer, type MessagesRequest, type ScriptedReply } from '../fakes/anthropic-server.js';
import { dbQuestion } from '../providers/claude-fixtures.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { fetchSession, sessionApi } from '../support/session-api.js';
import { waitUntil } from '../support/wait-until.js';
import { DATABASE_URL_FILE, TWO_NODES } from '../support/two-node-relay.js';

// A relay started on a database holding a session it cannot run any more: its provider (or
// that provider's engine) is not in this relay's registry, as when a database written by
// another version of askrelay is opened. The start goes on; that session ends `failed` with
// a sentence naming the provider (or engine), its pending cards end `cancelled` (as for a
// stopped session: no runner will read their answers), and every other session and card
// recovers as usual.

function model(request: MessagesRequest): ScriptedReply {
  if (lastToolResult(request)) return { text: 'ack' };
  return { text: 'Let me ask.', toolUse: { name: 'AskUserQuestion', input: { questions: [{ ...dbQuestion(), question: `Which database for ${lastUserText(request)}?` }] } } };
}

let fake: AnthropicServer;
let current: TestRelay;
const api = sessionApi(() => current);
const env = () => ({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h' });

beforeAll(async () => {
  fake = await startAnthropicServer({ model });
});
afterAll(async () => fake?.close());

interface Rewrite {
  /** Fields of the session record to overwrite. */
  fields?: Partial<Record<keyof Session, string>>;
  /** The provider's saved state, as stored text. */
  state?: string;
}

/** Rewrites a stored session, in whichever database the data folder's relay used, while no relay runs. */
async function rewriteSession(dataDir: string, id: string, { fields = {}, state }: Rewrite): Promise<void> {
  const change = (row: { data: string; state: string | null }) => [JSON.stringify({ ...JSON.parse(row.data), ...fields }), state ?? row.state];
  if (!TWO_NODES) {
    const db = new Database(join(dataDir, DB_FILE));
    try {
      const row = db.prepare('SELECT data, state FROM sessions WHERE id = ?').get(id) as { data: string; state: string | null };
      db.prepare('UPDATE sessions SET data = ?, state = ? WHERE id = ?').run(...change(row), id);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: readFileSync(join(dataDir, DATABASE_URL_FILE), 'utf8').trim() });
  await client.connect();
  try {
    const { rows } = await client.query<{ data: string; state: string | null }>('SELECT data, state FROM sessions WHERE id = $1', [id]);
    await client.query('UPDATE sessions SET data = $2, state = $3 WHERE id = $1', [id, ...change(rows[0])]);
  } finally {
    await client.end();
  }
}

/** What JSON.parse says about `text` (the wording is V8's). */
function jsonError(text: string): string {
  try {
    JSON.parse(text);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`${text} is JSON`);
}

async function startSession(prompt: string): Promise<{ session: Session; card: Card }> {
  const res = await current.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', model: 'claude-sonnet-5', prompt } });
  expect(res.status).toBe(201);
  const session = (await res.json()) as Session;
  return { session, card: await api.pendingCard(session.id) };
}

describe('recover() meets a session this relay cannot run', { timeout: 60_000 }, () => {
  it.each<[string, Rewrite, string]>([
    ['an unknown provider', { fields: { provider: 'retired' } }, 'The provider "retired" is not available in this relay any more, so the session cannot resume; its pending cards were cancelled.'],
    [
      'an unknown engine',
      { fields: { engine: 'telepathy' } },
      'The engine "telepathy" of claude is not available in this relay any more (it has code, messages), so the session cannot resume; its pending cards were cancelled.',
    ],
    // Its runner cannot even be made: the resume throws, and still only this session fails.
    ['a saved state cut short', { state: '{"messages": [{"role": "user"' }, `The session could not be resumed after the restart: ${jsonError('{"messages": [{"role": "user"')}`],
  ])('%s: the start goes on, that session fails with the sentence, its card is cancelled, the rest recovers', async (_what, rewrite, sentence) => {
    const first = await startTestRelay(env());
    current = first;
    // The session that cannot resume is the first stored: the ones after it are still picked up.
    const gone = await startSession('gone');
    const kept = await startSession('kept');
    const direct = await first.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Ship it?', options: ['Yes', 'No'] }] } });
    expect(direct.status).toBe(201);
    const directCard = (await direct.json()) as Card;
    const goneToken = first.sessions.agentToken(gone.session.id);
    await first.close();

    await rewriteSession(first.dataDir, gone.session.id, rewrite);
    const second = await startTestRelay(env(), first.dataDir);
    current = second;
    try {
      const failed = await fetchSession(second, gone.session.id);
      expect(failed).toMatchObject({ status: 'failed', error: sentence });
      const goneCard = (await (await second.api(`/api/cards/${gone.card.id}`)).json()) as Card;
      expect(goneCard.status).toBe('cancelled');
      // A failed session's agent token no longer counts.
      const asAgent = await fetch(new URL('/api/cards', second.url), { headers: { authorization: `Bearer ${goneToken}` } });
      expect(asAgent.status).toBe(401);

      // The other session waits on the same card, answerable; answered, its turn goes on.
      // Once its runner has asked again (re-attached to the card: the resume runs on its own).
      await waitUntil(async () => (await fetchSession(second, kept.session.id)).status === 'waiting', 'the kept session to wait on its card');
      expect((await api.pendingCard(kept.session.id)).id).toBe(kept.card.id);
      const answered = await second.api(`/api/cards/${kept.card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['SQLite'] } } } });
      expect(answered.status).toBe(200);
      await api.idleWith(kept.session.id, 'ack');
      // A card asked outside any session is untouched.
      expect(((await (await second.api(`/api/cards/${directCard.id}`)).json()) as Card).status).toBe('pending');
    } finally {
      await second.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});
