import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Session, TranscriptEntry } from '../../src/sessions/model.js';
import { PostgresSessionStore } from '../../src/store/postgres/postgres-session-store.js';
import { asyncSessions, type AsyncSessionStore } from '../../src/store/session-store.js';
import { bothStores, type StoreHarness } from '../support/store-harness.js';

// The session store's contract, run against both stores: the embedded SQLite file and a real
// PostgreSQL database (a fresh one per test, dropped afterwards). Whatever holds on one holds
// on the other, including when several nodes write one session at once.

const STORES = bothStores<AsyncSessionStore>({ sqlite: (s) => asyncSessions(s.sessions), postgres: (pool) => new PostgresSessionStore(pool) });

type TokenRow = { token_hash: string; session_id: string };
/** What the database keeps for agent tokens, read behind the store's back. */
async function tokenRows({ backend }: StoreHarness<AsyncSessionStore>): Promise<TokenRow[]> {
  const sql = 'SELECT token_hash, session_id FROM agent_tokens ORDER BY session_id';
  if (backend.kind === 'postgres') return (await backend.pool.query<TokenRow>(sql)).rows;
  const db = new Database(backend.file, { readonly: true });
  try {
    return db.prepare(sql).all() as TokenRow[];
  } finally {
    db.close();
  }
}

const session = (id: string, extra: Partial<Session> = {}): Session => ({
  id,
  provider: 'claude',
  engine: 'messages',
  model: 'claude-sonnet-4-5',
  status: 'running',
  relayMode: 'autopilot',
  agentsMayAnswer: false,
  createdAt: '2026-11-30T12:00:00.000Z',
  updatedAt: '2026-11-30T12:00:00.000Z',
  ...extra,
});
const entry = (text: string, role: TranscriptEntry['role'] = 'assistant'): TranscriptEntry => ({ at: '2026-11-30T12:00:01.000Z', role, text });
const ids = (sessions: Session[]) => sessions.map((s) => s.id);
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

for (const [name, open] of Object.entries(STORES)) {
  describe(`session store: ${name}`, () => {
    let h: StoreHarness<AsyncSessionStore>;
    beforeEach(async () => {
      h = await open();
    });
    afterEach(() => h.dispose());

    it('keeps the record as it went in, without its transcript; an id is stored once', async () => {
      const s = session('s_1', { error: undefined, askUserVariant: 'form' });
      await h.store.insert({ ...s, transcript: [entry('not kept here')] });
      const { transcript: _none, ...record } = s;
      expect(await h.store.get('s_1')).toEqual(record);
      expect((await h.store.get('s_1'))!.transcript).toBeUndefined();
      // Key order survives (every surface shows the record as stored).
      expect(JSON.stringify(await h.store.get('s_1'))).toBe(JSON.stringify(record));
      // The transcript given with the record is not appended: entries arrive through append only.
      expect(await h.store.transcript('s_1')).toEqual([]);
      expect(await h.store.get('s_none')).toBeUndefined();
      await expect(h.store.insert(session('s_1', { model: 'another' }))).rejects.toThrow();
      expect((await h.store.get('s_1'))!.model).toBe('claude-sonnet-4-5');
    });

    it('updates by merging a patch onto the record, and returns what it stored', async () => {
      await h.store.insert(session('s_1'));
      const next = await h.store.update('s_1', { status: 'failed', error: 'the provider gave up', updatedAt: '2026-11-30T12:05:00.000Z' });
      const expected = { ...session('s_1'), status: 'failed', error: 'the provider gave up', updatedAt: '2026-11-30T12:05:00.000Z' };
      expect(next).toEqual(expected);
      // Patched keys keep their place; a new one (error) comes last.
      expect(JSON.stringify(await h.store.get('s_1'))).toBe(JSON.stringify(expected));
      // The status the filters read changes with the record.
      expect(ids(await h.store.active())).toEqual([]);
      expect(await h.store.update('s_1', {})).toEqual(expected);
      expect(await h.store.update('s_none', { status: 'idle' })).toBeUndefined();
      expect(await h.store.get('s_none')).toBeUndefined();
    });

    it('lists every session and the active ones by creation time, then insertion order', async () => {
      const at = (s: number) => `2026-11-30T12:00:0${s}.000Z`;
      await h.store.insert(session('s_late', { createdAt: at(9) }));
      await h.store.insert(session('s_b', { createdAt: at(2) }));
      await h.store.insert(session('s_a', { createdAt: at(2), status: 'stopped' })); // same time as s_b: inserted after it
      await h.store.insert(session('s_first', { createdAt: at(1), status: 'idle' }));
      await h.store.insert(session('s_c', { createdAt: at(2), status: 'waiting' }));
      await h.store.insert(session('s_0', { createdAt: at(2), status: 'failed' }));
      await h.store.insert(session('s_stuck', { createdAt: at(5), status: 'stuck' }));
      expect(ids(await h.store.list())).toEqual(['s_first', 's_b', 's_a', 's_c', 's_0', 's_stuck', 's_late']);
      // Not stopped or failed: what a restart resumes.
      expect(ids(await h.store.active())).toEqual(['s_first', 's_b', 's_c', 's_stuck', 's_late']);
      await h.store.update('s_b', { status: 'stopped' });
      await h.store.update('s_0', { status: 'idle' });
      await h.store.update('s_c', { status: 'running' }); // updated last, still in its place
      expect(ids(await h.store.active())).toEqual(['s_first', 's_c', 's_0', 's_stuck', 's_late']);
      expect(ids(await h.store.list())).toEqual(['s_first', 's_b', 's_a', 's_c', 's_0', 's_stuck', 's_late']);
      // Lists leave the transcript out.
      await h.store.append('s_c', entry('hello'));
      expect((await h.store.list()).every((s) => s.transcript === undefined)).toBe(true);
    });

    it("appends each session's transcript in order, apart from the others'", async () => {
      await h.store.insert(session('s_1'));
      await h.store.insert(session('s_2'));
      const one = [entry('Plan the migration', 'user'), { ...entry('Which database?', 'tool'), cardId: 'c_1' }, entry('PostgreSQL it is')];
      await h.store.append('s_1', one[0]);
      await h.store.append('s_2', entry('other'));
      await h.store.append('s_1', one[1]);
      await h.store.append('s_1', one[2]);
      expect(await h.store.transcript('s_1')).toEqual(one);
      expect(JSON.stringify(await h.store.transcript('s_1'))).toBe(JSON.stringify(one));
      expect(await h.store.transcript('s_2')).toEqual([entry('other')]);
      expect(await h.store.transcript('s_none')).toEqual([]);
      // As in SQLite, the transcript does not check that the record exists.
      await h.store.append('s_unrecorded', entry('early'));
      expect(await h.store.transcript('s_unrecorded')).toEqual([entry('early')]);
    });

    it("keeps the provider's state apart from the record, replaced whole on save", async () => {
      await h.store.insert(session('s_1'));
      expect(await h.store.loadState('s_1')).toBeUndefined();
      const state = { messages: [{ role: 'user', content: 'hi' }], turn: 2, nested: { z: 1, a: [true, null] } };
      await h.store.saveState('s_1', state);
      expect(await h.store.loadState('s_1')).toEqual(state);
      expect(JSON.stringify(await h.store.loadState('s_1'))).toBe(JSON.stringify(state));
      // The record and its updates neither show nor disturb the state.
      await h.store.update('s_1', { status: 'idle' });
      expect(await h.store.get('s_1')).toEqual({ ...session('s_1'), status: 'idle' });
      expect(await h.store.loadState('s_1')).toEqual(state);
      await h.store.saveState('s_1', { chat: 'resp_2' });
      expect(await h.store.loadState<{ chat: string }>('s_1')).toEqual({ chat: 'resp_2' });
      // No record, no state: saving one for an unknown session creates nothing.
      await h.store.saveState('s_none', { chat: 'x' });
      expect(await h.store.loadState('s_none')).toBeUndefined();
      expect(await h.store.get('s_none')).toBeUndefined();
    });

    it("finds a live session by its agent token, keeping only the token's hash", async () => {
      await h.store.insert(session('s_1'));
      await h.store.insert(session('s_2', { status: 'idle' }));
      const [t1, t2] = ['asa_first_token_0123456789abcdefghij', 'asa_second_token_0123456789abcdefghi'];
      await h.store.setAgentToken('s_1', t1);
      await h.store.setAgentToken('s_2', t2);
      await h.store.setAgentToken('s_1', t1); // stored again by a node that had not yet: no change
      expect(await h.store.sessionOfToken(t1)).toBe('s_1');
      expect(await h.store.sessionOfToken(t2)).toBe('s_2');
      expect(await h.store.sessionOfToken('asa_unknown')).toBeUndefined();
      expect(await h.store.sessionOfToken(sha256(t1))).toBeUndefined(); // the hash is no token
      expect(await tokenRows(h)).toEqual([
        { token_hash: sha256(t1), session_id: 's_1' },
        { token_hash: sha256(t2), session_id: 's_2' },
      ]);
      // A new token (another key) replaces the session's earlier one.
      const t1b = 'asa_first_token_under_another_key_0123';
      await h.store.setAgentToken('s_1', t1b);
      expect(await h.store.sessionOfToken(t1)).toBeUndefined();
      expect(await h.store.sessionOfToken(t1b)).toBe('s_1');
      // A stopped or failed session's token is void; a token whose session has no record too.
      await h.store.update('s_1', { status: 'stopped' });
      await h.store.update('s_2', { status: 'failed' });
      expect(await h.store.sessionOfToken(t1b)).toBeUndefined();
      expect(await h.store.sessionOfToken(t2)).toBeUndefined();
      await h.store.setAgentToken('s_unrecorded', 'asa_token_of_no_session_0123456789');
      expect(await h.store.sessionOfToken('asa_token_of_no_session_0123456789')).toBeUndefined();
      // One hash, one session.
      await expect(h.store.setAgentToken('s_3', t2)).rejects.toThrow();
    });

    it('remembers the watches the human granted, one way', async () => {
      expect(await h.store.watches('s_watcher', 's_target')).toBe(false);
      await h.store.grantWatch('s_watcher', 's_target', 1_764_504_000_000);
      await h.store.grantWatch('s_watcher', 's_target', 1_764_504_001_000); // granted again: still one grant
      expect(await h.store.watches('s_watcher', 's_target')).toBe(true);
      expect(await h.store.watches('s_target', 's_watcher')).toBe(false);
      expect(await h.store.watches('s_watcher', 's_other')).toBe(false);
      expect(await (await h.other()).watches('s_watcher', 's_target')).toBe(true);
    });

    it("several nodes appending to one session at once: every entry kept, once, in one order", async () => {
      await h.store.insert(session('s_1'));
      await h.store.insert(session('s_2'));
      const handles = [h.store, ...(await Promise.all(Array.from({ length: 3 }, () => h.other())))];
      const texts = Array.from({ length: 32 }, (_, i) => `entry ${i}`);
      await Promise.all(
        texts.flatMap((text, i) => [handles[i % handles.length].append('s_1', entry(text)), handles[(i + 1) % handles.length].append('s_2', entry(text))]),
      );
      for (const id of ['s_1', 's_2']) {
        const seen = (await h.store.transcript(id)).map((e) => e.text);
        expect(seen.slice().sort()).toEqual(texts.slice().sort());
        // Every node reads the same order.
        for (const other of handles) expect((await other.transcript(id)).map((e) => e.text)).toEqual(seen);
      }
      // And the next append, after the race, still comes last.
      await handles[2].append('s_1', entry('after'));
      expect((await h.store.transcript('s_1')).at(-1)!.text).toBe('after');
    });

    it('several nodes patching one session at once: no patch is lost', async () => {
      const handles = [h.store, ...(await Promise.all(Array.from({ length: 4 }, () => h.other())))];
      for (let round = 0; round < 5; round++) {
        const id = `s_${round}`;
        await h.store.insert(session(id, { model: undefined }));
        const patches = [{ status: 'idle' as const }, { error: `error ${round}` }, { model: `model ${round}` }, { agentsMayAnswer: true }, { updatedAt: `2026-11-30T12:0${round}:00.000Z` }];
        await Promise.all(patches.map((patch, i) => handles[i].update(id, patch)));
        expect(await h.store.get(id)).toEqual({ ...session(id), ...Object.assign({}, ...patches) });
      }
    });

    it('several nodes storing a new agent token at once all succeed', async () => {
      // Every node stores a session's token on first use: on a new session they may all do it together.
      const handles = [h.store, ...(await Promise.all(Array.from({ length: 7 }, () => h.other())))];
      const token = (round: number) => `asa_round_${round}_token_0123456789abcdefgh`;
      for (let round = 0; round < 40; round++) {
        await h.store.insert(session(`s_${round}`));
        await Promise.all(handles.map((s) => s.setAgentToken(`s_${round}`, token(round))));
        for (const s of handles) expect(await s.sessionOfToken(token(round))).toBe(`s_${round}`);
      }
      // And all together replacing one.
      await Promise.all(handles.map((s) => s.setAgentToken('s_0', 'asa_replaced_token_0123456789abcdefgh')));
      expect(await h.store.sessionOfToken(token(0))).toBeUndefined();
      expect(await h.store.sessionOfToken('asa_replaced_token_0123456789abcdefgh')).toBe('s_0');
      expect((await tokenRows(h)).length).toBe(40);
    });
  });
}
