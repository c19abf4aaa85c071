import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { asyncAudit, AuditStore, hashEntry, type AsyncAuditStore, type AuditCheck, type AuditEntry, type AuditRecord } from '../../src/store/audit-store.js';
import { migrate } from '../../src/store/postgres/migrations.js';
import { PostgresAuditStore } from '../../src/store/postgres/postgres-audit-store.js';
import { freshDatabase, type FreshDatabase, testPool } from '../support/postgres.js';
import { lockSqliteFile } from '../support/sqlite-locker.js';
import { waitUntil } from '../support/wait-until.js';

// The audit log's hash chain, run against both stores: a real SQLite file and a real
// PostgreSQL database (a fresh one per test, dropped afterwards). Tampering is done the way
// someone with the database would do it: through a connection of their own, behind the
// store's back (a second better-sqlite3 connection to the file, a second PostgreSQL client).

const GENESIS = '0'.repeat(64);

interface Harness {
  name: 'sqlite' | 'postgres';
  /** A handle on the log through the relay's connection, opened as the relay opens it. */
  open(options?: { key?: Buffer }): Promise<AsyncAuditStore>;
  /** Another process or node: a handle through a connection of its own. */
  other(options?: { key?: Buffer }): Promise<AsyncAuditStore>;
  /** Closes the relay's connection (and the tamperer's) and opens them again. */
  restart(): Promise<void>;
  /** The tamperer's connection: one statement, `?` for each parameter. */
  run(sql: string, ...params: unknown[]): Promise<void>;
  /** The tamperer reads: the first column of every row. */
  column(sql: string, ...params: unknown[]): Promise<unknown[]>;
  dispose(): Promise<void>;
}

function connect(file: string): Database.Database {
  const conn = new Database(file);
  conn.pragma('journal_mode = WAL');
  conn.pragma('busy_timeout = 5000');
  return conn;
}

/** `?` placeholders as PostgreSQL numbers them. */
const dollars = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

const STORES: Record<Harness['name'], () => Promise<Harness>> = {
  sqlite: async () => {
    const dir = mkdtempSync(join(tmpdir(), 'askrelay-audit-'));
    const file = join(dir, 'askrelay.sqlite');
    let db = connect(file);
    let tamperer = connect(file);
    const others: Database.Database[] = [];
    const opened: AsyncAuditStore[] = [];
    const track = (store: AuditStore) => opened[opened.push(asyncAudit(store)) - 1];
    return {
      name: 'sqlite',
      open: async (options) => track(new AuditStore(db, options)),
      other: async (options) => track(new AuditStore(others[others.push(connect(file)) - 1], options)),
      restart: async () => {
        tamperer.close();
        db.close();
        db = connect(file);
        tamperer = connect(file);
      },
      run: async (sql, ...params) => void tamperer.prepare(sql).run(...params),
      column: async (sql, ...params) => tamperer.prepare(sql).pluck().all(...params),
      dispose: async () => {
        for (const store of opened) await store.flush().catch(() => {});
        for (const conn of [tamperer, db, ...others]) if (conn.open) conn.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
  postgres: async () => {
    const db: FreshDatabase = await freshDatabase();
    const newPool = () => testPool(db.url);
    let pool = newPool();
    await migrate(pool);
    const tamperer = new pg.Client({ connectionString: db.url });
    await tamperer.connect();
    const others: pg.Pool[] = [];
    const opened: AsyncAuditStore[] = [];
    const track = async (store: Promise<AsyncAuditStore>) => opened[opened.push(await store) - 1];
    return {
      name: 'postgres',
      open: (options) => track(PostgresAuditStore.create(pool, options)),
      other: (options) => track(PostgresAuditStore.create(others[others.push(newPool()) - 1], options)),
      restart: async () => {
        await pool.end();
        pool = newPool();
      },
      run: async (sql, ...params) => void (await tamperer.query(dollars(sql), params)),
      column: async (sql, ...params) => (await tamperer.query({ text: dollars(sql), values: params, rowMode: 'array' })).rows.map((r: unknown[]) => r[0]),
      dispose: async () => {
        for (const store of opened) await store.flush().catch(() => {});
        await tamperer.end();
        for (const p of [pool, ...others]) await p.end().catch(() => {});
        await db.drop();
      },
    };
  },
};

const record = (n: number, extra: Partial<AuditRecord> = {}): AuditRecord => ({
  at: new Date(Date.UTC(2026, 0, 1, 12, 0, n)).toISOString(),
  event: n % 2 ? 'card.created' : 'card.refused',
  cardId: `c_${String(n).padStart(16, '0')}`,
  sessionId: n % 3 ? 's_a' : null,
  actor: n % 2 ? { kind: 'system', id: 'relay' } : { kind: 'agent', id: 's_b' },
  surface: n % 2 ? 'claude' : 'api',
  ...(n % 2 ? {} : { detail: { action: 'answer', code: 'agents_not_allowed' } }),
  ...extra,
});

const nextTurn = () => new Promise((r) => setImmediate(r));

for (const [name, openHarness] of Object.entries(STORES)) {
  describe(`audit store: ${name}`, () => {
    let h: Harness;
    let audit: AsyncAuditStore;

    beforeEach(async () => {
      h = await openHarness();
      audit = await h.open();
    });
    afterEach(() => h.dispose());

    /** Appends entries `from`…`to` to `store`, one after the other, and returns them. */
    const fillWith = async (store: AsyncAuditStore, from: number, to: number): Promise<AuditEntry[]> => {
      const entries: AuditEntry[] = [];
      for (let n = from; n <= to; n++) entries.push(await store.append(record(n)));
      return entries;
    };
    /** Appends `n` entries and returns them. */
    const fill = (n: number) => fillWith(audit, 1, n);
    const count = async () => Number((await h.column('SELECT COUNT(*) FROM audit'))[0]);

    describe('the chain', () => {
      it('enqueued entries are written together right after the turn, in order, behind earlier ones; reads see them at once', async () => {
        audit.enqueue(record(1));
        audit.enqueue(record(2));
        // Not written yet. Only SQLite's count reads before the turn ends: PostgreSQL's takes a
        // round trip, during which the turn may end and its write land (a loaded machine did so).
        if (h.name !== 'postgres') expect(await count()).toBe(0);
        await nextTurn();
        // SQLite writes within that turn; PostgreSQL's write starts there and lands a few
        // round trips later, with nobody reading.
        if (h.name === 'postgres') await waitUntil(async () => (await count()) > 0, 'the turn written');
        expect(await count()).toBe(2);
        audit.enqueue(record(3));
        const fourth = await audit.append(record(4)); // a direct append writes the queue first
        expect(fourth.seq).toBe(4);
        audit.enqueue(record(5));
        expect((await audit.list()).map((e) => [e.seq, e.cardId])).toEqual([1, 2, 3, 4, 5].map((n) => [n, record(n).cardId]));
        expect(await audit.verify()).toEqual({ ok: true, entries: 5, problems: [] });
      });

      it('an empty log verifies', async () => {
        expect(await audit.list()).toEqual([]);
        expect(await audit.verify()).toEqual({ ok: true, entries: 0, problems: [] });
      });

      it('append numbers the entries and links each to the hash of the one before', async () => {
        const entries = await fill(5);
        expect(entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
        expect(entries[0].prevHash).toBe(GENESIS);
        for (let i = 1; i < entries.length; i++) expect(entries[i].prevHash).toBe(entries[i - 1].hash);
        for (const entry of entries) {
          const { hash, ...fields } = entry;
          expect(hash).toMatch(/^[0-9a-f]{64}$/);
          expect(hashEntry(fields)).toBe(hash);
        }
        expect(new Set(entries.map((e) => e.hash)).size).toBe(5);
        // What was appended is what is stored, field for field.
        expect(await audit.list()).toEqual(entries);
        expect(entries[1]).toEqual({ seq: 2, ...record(2), prevHash: entries[0].hash, hash: entries[1].hash });
        expect(await audit.verify()).toEqual({ ok: true, entries: 5, problems: [] });
      });

      it('the hash covers every field', async () => {
        const [entry] = await fill(1);
        const { hash: _hash, ...fields } = entry;
        const variants: Omit<AuditEntry, 'hash'>[] = [
          { ...fields, seq: 2 },
          { ...fields, at: '2026-01-01T12:00:59.000Z' },
          { ...fields, event: 'card.answered' },
          { ...fields, cardId: 'c_other' },
          { ...fields, sessionId: 's_other' },
          { ...fields, actor: { kind: 'human', id: 'relay' } },
          { ...fields, actor: { kind: 'system', id: 'operator' } },
          { ...fields, surface: 'web' },
          { ...fields, detail: { x: 1 } },
          { ...fields, prevHash: '1'.repeat(64) },
        ];
        for (const variant of variants) expect(hashEntry(variant), JSON.stringify(variant)).not.toBe(entry.hash);
      });

      it('survives closing and opening the database again, and goes on from where it was', async () => {
        const before = await fill(3);
        await h.restart();
        audit = await h.open();
        expect(await audit.list()).toEqual(before);
        const next = await audit.append(record(4));
        expect(next).toMatchObject({ seq: 4, prevHash: before[2].hash });
        expect(await audit.verify()).toEqual({ ok: true, entries: 4, problems: [] });
      });

      it('two connections appending in turn keep one chain', async () => {
        const second = await h.other();
        const appended: AuditEntry[] = [];
        for (let i = 0; i < 6; i++) appended.push(await (i % 2 ? second : audit).append(record(i + 1)));
        expect(appended.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
        for (let i = 1; i < appended.length; i++) expect(appended[i].prevHash).toBe(appended[i - 1].hash);
        expect(await audit.verify()).toEqual({ ok: true, entries: 6, problems: [] });
        expect(await second.verify()).toEqual({ ok: true, entries: 6, problems: [] });
      });

      it("four handles (nodes) appending at once keep ONE chain: every entry once, no gap, each handle's in its order", async () => {
        const handles = [audit, ...(await Promise.all([1, 2, 3].map(() => h.other())))];
        for (const store of handles) await store.head(); // every handle connected first, so the writes really race
        const PER = 30;
        const mine = (node: number, i: number) => record(i + 1, { cardId: `c_node${node}_${String(i).padStart(3, '0')}` });
        await Promise.all(
          handles.map(async (store, node) => {
            for (let i = 0; i < PER; i++) {
              // Runs of three enqueued entries (a turn's write, in the background or taken
              // along by the append after them) between appends of one entry each.
              if (i % 5 < 3) store.enqueue(mine(node, i));
              else await store.append(mine(node, i));
              if (i % 5 === 1) await nextTurn();
            }
            await store.flush();
          }),
        );
        const total = handles.length * PER;
        const entries = await audit.list(0, 10_000);
        expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
        expect(entries.slice(1).map((e) => e.prevHash)).toEqual(entries.slice(0, -1).map((e) => e.hash));
        for (let node = 0; node < handles.length; node++) {
          const theirs = entries.filter((e) => e.cardId!.startsWith(`c_node${node}_`)).map((e) => e.cardId);
          expect(theirs).toEqual(Array.from({ length: PER }, (_, i) => mine(node, i).cardId));
        }
        for (const store of handles) expect(await store.verify()).toEqual({ ok: true, entries: total, problems: [] });
        expect(await audit.head()).toEqual({ seq: total, hash: entries.at(-1)!.hash });
      });

      it('verify, while other handles append, sees one consistent log', async () => {
        const writers = await Promise.all([1, 2].map(() => h.other()));
        for (const store of writers) await store.head();
        let writing = true;
        const written = Promise.all(
          writers.map(async (store, node) => {
            for (let i = 0; i < 40; i++) await store.append(record(i + 1, { cardId: `c_node${node}_${i}` }));
          }),
        ).finally(() => (writing = false));
        const checks: AuditCheck[] = [];
        while (writing) checks.push(await audit.verify());
        await written;
        expect(checks.length).toBeGreaterThan(0);
        for (const check of checks) expect(check).toMatchObject({ ok: true, problems: [] });
        expect(await audit.verify()).toEqual({ ok: true, entries: 80, problems: [] });
      });
    });

    describe('verify finds tampering', () => {
      it('a row whose data was edited: "entry N was edited"', async () => {
        await fill(5);
        await h.run(
          h.name === 'sqlite'
            ? `UPDATE audit SET data = json_set(data, '$.actor.id', 'someone else') WHERE seq = 3`
            : `UPDATE audit SET data = jsonb_set(data::jsonb, '{actor,id}', '"someone else"')::text WHERE seq = 3`,
        );
        expect(await audit.verify()).toEqual({ ok: false, entries: 5, problems: ['entry 3 was edited'] });
      });

      it('an edited row whose hash was recomputed breaks the link to the next one', async () => {
        const entries = await fill(5);
        const { hash: _old, ...fields } = entries[3];
        const forged = { ...fields, surface: 'web' };
        const hash = hashEntry(forged);
        await h.run('UPDATE audit SET data = ?, hash = ? WHERE seq = 4', JSON.stringify({ ...forged, hash }), hash);
        expect(await audit.verify()).toEqual({ ok: false, entries: 5, problems: ['entry 5 does not follow entry 4'] });
      });

      it('a forged last entry with a recomputed hash is caught by the head', async () => {
        const entries = await fill(3);
        const { hash: _old, ...fields } = entries[2];
        const forged = { ...fields, detail: { action: 'answer', code: 'human_only' } };
        const hash = hashEntry(forged);
        await h.run('UPDATE audit SET data = ?, hash = ? WHERE seq = 3', JSON.stringify({ ...forged, hash }), hash);
        expect(await audit.verify()).toEqual({ ok: false, entries: 3, problems: ['the log head was edited'] });
      });

      it('a row whose stored prev_hash or hash column was edited', async () => {
        await fill(4);
        await h.run(`UPDATE audit SET hash = ? WHERE seq = 2`, 'f'.repeat(64));
        const check = await audit.verify();
        expect(check.ok).toBe(false);
        expect(check.problems).toContain('entry 2 was edited');
        expect(check.problems).toContain('entry 3 does not follow entry 2');
      });

      it('a row that is not an entry any more', async () => {
        await fill(3);
        await h.run(`UPDATE audit SET data = '{"seq": 2}' WHERE seq = 2`);
        expect(await audit.verify()).toEqual({ ok: false, entries: 3, problems: ['entry 2 is not a valid entry'] });
      });

      it('a deleted middle row is reported as removed', async () => {
        await fill(5);
        await h.run('DELETE FROM audit WHERE seq = 3');
        const check = await audit.verify();
        expect(check.ok).toBe(false);
        expect(check.entries).toBe(4);
        expect(check.problems).toHaveLength(1);
        expect(check.problems[0]).toMatch(/^entr(y|ies) 3(-3)? (was|were) removed$/);
      });

      it('several deleted middle rows', async () => {
        await fill(6);
        await h.run('DELETE FROM audit WHERE seq IN (2, 3, 4)');
        expect(await audit.verify()).toEqual({ ok: false, entries: 3, problems: ['entries 2-4 were removed'] });
      });

      it('a deleted first row', async () => {
        await fill(3);
        await h.run('DELETE FROM audit WHERE seq = 1');
        const check = await audit.verify();
        expect(check.ok).toBe(false);
        expect(check.problems).toHaveLength(1);
        expect(check.problems[0]).toMatch(/^entr(y|ies) 1(-1)? (was|were) removed$/);
      });

      it('a deleted last row is found through the head', async () => {
        await fill(5);
        await h.run('DELETE FROM audit WHERE seq = 5');
        expect(await audit.verify()).toEqual({ ok: false, entries: 4, problems: ['entries after 4 (up to 5) were removed'] });
      });

      it('every row deleted is found through the head', async () => {
        await fill(5);
        await h.run('DELETE FROM audit');
        expect(await audit.verify()).toEqual({ ok: false, entries: 0, problems: ['entries after 0 (up to 5) were removed'] });
      });

      it('a removed tail stays visible after new entries are appended', async () => {
        await fill(5);
        await h.run('DELETE FROM audit WHERE seq = 5');
        const next = await audit.append(record(6));
        expect(next.seq).toBe(6);
        const check = await audit.verify();
        expect(check.ok).toBe(false);
        expect(check.problems).toHaveLength(1);
        expect(check.problems[0]).toMatch(/^entr(y|ies) 5(-5)? (was|were) removed$/);
      });

      it('a head that was edited or removed', async () => {
        await fill(3);
        await h.run(`UPDATE audit_head SET hash = ?`, 'e'.repeat(64));
        expect(await audit.verify()).toEqual({ ok: false, entries: 3, problems: ['the log head was edited'] });
        await h.run('DELETE FROM audit_head');
        expect(await audit.verify()).toEqual({ ok: false, entries: 3, problems: ['the log head was removed'] });
      });
    });

    describe('list', () => {
      it('pages oldest first with after (the last seq seen) and limit', async () => {
        const entries = await fill(5);
        expect(await audit.list(0, 2)).toEqual(entries.slice(0, 2));
        expect(await audit.list(2, 2)).toEqual(entries.slice(2, 4));
        expect(await audit.list(4, 2)).toEqual(entries.slice(4));
        expect(await audit.list(5, 2)).toEqual([]);
        expect(await audit.list(3)).toEqual(entries.slice(3));
        expect(await audit.list()).toEqual(entries);
        // Paging through to the end visits every entry once, in order.
        const seen: number[] = [];
        for (let after = 0, page = await audit.list(after, 2); page.length; after = page.at(-1)!.seq, page = await audit.list(after, 2)) {
          seen.push(...page.map((e) => e.seq));
        }
        expect(seen).toEqual([1, 2, 3, 4, 5]);
      });

      it('after a removed row, paging skips the gap', async () => {
        await fill(5);
        await h.run('DELETE FROM audit WHERE seq = 2');
        expect((await audit.list(1, 2)).map((e) => e.seq)).toEqual([3, 4]);
      });
    });

    describe('the keyed chain (an HMAC under a key kept outside the database)', () => {
      const KEY = Buffer.from('the audit key, kept outside the database');
      const OTHER = Buffer.from('another audit key, not the one it was written with');
      const keyed = (key = KEY) => h.open({ key });

      /** Rewrites entries `from`… as the tamperer would: each edited by `edit`, re-hashed with plain SHA-256 and re-linked, the head moved along. */
      async function rewritePlain(from: number, edit: (e: Omit<AuditEntry, 'hash'>) => Omit<AuditEntry, 'hash'> = (e) => e): Promise<void> {
        const rows = (await h.column('SELECT data FROM audit WHERE seq >= ? ORDER BY seq', from)) as string[];
        let prev = from === 1 ? GENESIS : ((await h.column('SELECT hash FROM audit WHERE seq = ?', from - 1))[0] as string);
        for (const data of rows) {
          const { hash: _old, alg: _alg, keyId: _keyId, ...fields } = JSON.parse(data) as AuditEntry;
          const forged = edit({ ...fields, prevHash: prev });
          const hash = hashEntry(forged);
          await h.run('UPDATE audit SET data = ?, prev_hash = ?, hash = ? WHERE seq = ?', JSON.stringify({ ...forged, hash }), prev, hash, forged.seq);
          prev = hash;
        }
        await h.run('UPDATE audit_head SET seq = (SELECT MAX(seq) FROM audit), hash = ?', prev);
      }

      it("every entry is marked hmac-sha256 with the key's id, and its hash is not the plain SHA-256", async () => {
        const store = await keyed();
        const entries = await fillWith(store, 1, 3);
        for (const entry of entries) {
          expect(entry).toMatchObject({ alg: 'hmac-sha256', keyId: expect.stringMatching(/^[0-9a-f]{16}$/) });
          const { hash, ...fields } = entry;
          expect(hash).toMatch(/^[0-9a-f]{64}$/);
          expect(hashEntry(fields)).not.toBe(hash);
        }
        expect(new Set(entries.map((e) => e.keyId)).size).toBe(1);
        expect(await store.verify()).toEqual({ ok: true, entries: 3, problems: [] });
        expect(store.keyedNotice).toBeUndefined(); // an empty log is keyed from its first entry: nothing to say
        expect((await (await keyed(OTHER)).list()).at(-1)!.keyId).not.toBe(entries[0].keyId); // the id names the key
      });

      it('an entry edited and every later hash recomputed with plain SHA-256 fails verify', async () => {
        const store = await keyed();
        await fillWith(store, 1, 5);
        await rewritePlain(3, (e) => (e.seq === 3 ? { ...e, actor: { kind: 'human', id: 'operator' } } : e));
        expect(await store.verify()).toEqual({ ok: false, entries: 5, problems: ['entry 3 is not keyed', 'entry 4 is not keyed', 'entry 5 is not keyed'] });
      });

      it('the markers kept but the hash recomputed with plain SHA-256: "entry N was edited"', async () => {
        const store = await keyed();
        const entries = await fillWith(store, 1, 3);
        const { hash: _old, ...fields } = entries[1];
        const forged = { ...fields, surface: 'web' };
        const hash = hashEntry(forged);
        await h.run('UPDATE audit SET data = ?, hash = ? WHERE seq = 2', JSON.stringify({ ...forged, hash }), hash);
        expect((await store.verify()).problems).toEqual(['entry 2 was edited', 'entry 3 does not follow entry 2']);
      });

      it("the whole log rewritten with plain SHA-256 is caught: a keyed relay's last entry is always keyed", async () => {
        const store = await keyed();
        await fillWith(store, 1, 4);
        await rewritePlain(1);
        expect(await store.verify()).toEqual({ ok: false, entries: 4, problems: ['entry 4 is not keyed, though this relay keys every entry it writes: keyed entries after it were removed or rewritten'] });
      });

      it('the tail deleted and the head rewritten is caught by a pinned head', async () => {
        const store = await keyed();
        await fillWith(store, 1, 5);
        const pinned = await store.head();
        expect(pinned).toEqual({ seq: 5, hash: (await store.list()).at(-1)!.hash });
        expect(await store.verify(pinned)).toEqual({ ok: true, entries: 5, problems: [] });
        await h.run('DELETE FROM audit WHERE seq > 3');
        await h.run('UPDATE audit_head SET seq = 3, hash = (SELECT hash FROM audit WHERE seq = 3)');
        // What is left is a genuine chain: only the pin, kept elsewhere, knows it was longer.
        expect(await store.verify()).toEqual({ ok: true, entries: 3, problems: [] });
        expect(await store.verify(pinned)).toEqual({ ok: false, entries: 3, problems: ['the log ends at entry 3, before the pinned head (entry 5): entries were removed'] });
      });

      it("the tail deleted and written again (so the pinned seq is back) is caught by the pin's hash", async () => {
        const store = await keyed();
        await fillWith(store, 1, 5);
        const pinned = await store.head();
        await h.run('DELETE FROM audit WHERE seq > 3');
        await h.run('UPDATE audit_head SET seq = 3, hash = (SELECT hash FROM audit WHERE seq = 3)');
        for (const n of [14, 15, 16]) await store.append(record(n)); // the relay goes on: entries 4-6 again, other ones
        const check = await store.verify(pinned);
        expect(check.ok).toBe(false);
        expect(check.problems).toEqual([`entry 5 is not the pinned head (its hash is ${(await store.list())[4].hash.slice(0, 16)}…, the pin's ${pinned.hash.slice(0, 16)}…): the log was rewritten`]);
        expect((await store.verify({ seq: 9, hash: pinned.hash })).problems).toEqual(['the log ends at entry 6, before the pinned head (entry 9): entries were removed']);
        await h.run('DELETE FROM audit WHERE seq = 2');
        expect((await store.verify({ seq: 2, hash: pinned.hash })).problems).toContain('the pinned head (entry 2) was removed');
      });

      it('an old unkeyed log keeps verifying: keyed from the next entry on, and the switch is recorded', async () => {
        const old = await fill(3); // written before there was a key
        const store = await keyed();
        expect(store.keyedNotice).toBe('The audit log is keyed from entry 4 on; the 3 entries before it stay plain SHA-256 and are checked as such.');
        const entries = await store.list();
        expect(entries.slice(0, 3)).toEqual(old);
        expect(entries[3]).toMatchObject({ seq: 4, event: 'audit.keyed', actor: { kind: 'system', id: 'relay' }, alg: 'hmac-sha256', detail: { algorithm: 'hmac-sha256', keyId: entries[3].keyId } });
        await fillWith(store, 5, 7);
        expect(await store.verify()).toEqual({ ok: true, entries: 7, problems: [] });
        // Opened again with the same key: nothing more to record, and the old entries still verify.
        const again = await keyed();
        expect(again.keyedNotice).toBeUndefined();
        expect(await again.verify()).toEqual({ ok: true, entries: 7, problems: [] });
        // An unkeyed entry after the switch (an older relay still writing, or a forger) is named.
        const last = (await again.list()).at(-1)!;
        const base = { ...record(8), seq: 8, prevHash: last.hash };
        const hash = hashEntry(base);
        await h.run('INSERT INTO audit (seq, data, prev_hash, hash) VALUES (?, ?, ?, ?)', 8, JSON.stringify({ ...base, hash }), last.hash, hash);
        await h.run('UPDATE audit_head SET seq = 8, hash = ?', hash);
        expect((await again.verify()).problems).toEqual(['entry 8 is not keyed']);
      });

      it('handles (nodes) opening an unkeyed log with the key at once record the switch once', async () => {
        await fill(3);
        const opened = await Promise.all([1, 2, 3].map(() => h.other({ key: KEY })));
        expect((await audit.list()).map((e) => e.event)).toEqual(['card.created', 'card.refused', 'card.created', 'audit.keyed']);
        expect(opened.filter((store) => store.keyedNotice)).toHaveLength(1);
        expect(await opened[2].verify()).toEqual({ ok: true, entries: 4, problems: [] });
      });

      it('an old log truncated back to before the switch is caught', async () => {
        await fill(3);
        const store = await keyed();
        await fillWith(store, 5, 6);
        await h.run('DELETE FROM audit WHERE seq > 3');
        await h.run('UPDATE audit_head SET seq = 3, hash = (SELECT hash FROM audit WHERE seq = 3)');
        expect((await store.verify()).problems).toEqual(['entry 3 is not keyed, though this relay keys every entry it writes: keyed entries after it were removed or rewritten']);
      });

      it('a wrong key or none is named, once for the whole run of entries', async () => {
        const first = await keyed();
        await fillWith(first, 1, 5);
        const firstId = (await first.list())[0].keyId!;

        const none = await h.open();
        expect(await none.verify()).toEqual({ ok: false, entries: 5, problems: ['entries 1-5 are keyed, and this relay has no audit key to check them with'] });

        const wrong = await keyed(OTHER);
        const entries = await wrong.list();
        const otherId = entries[5].keyId!;
        expect(otherId).not.toBe(firstId);
        expect(entries[5]).toMatchObject({ seq: 6, event: 'audit.keyed', detail: { keyId: otherId, previousKeyId: firstId } });
        expect(wrong.keyedNotice).toBe(
          `The audit log's last entry was keyed with another key (${firstId}), not this relay's (${otherId}); entries from 6 on are keyed with this one, and "askrelay audit verify" reports the older keyed entries until their key is back.`,
        );
        expect(await wrong.verify()).toEqual({ ok: false, entries: 6, problems: [`entries 1-5 were keyed with another audit key (${firstId}), not this relay's (${otherId})`] });
        // With the right key back, all of it verifies: the switch entry is keyed with the other key.
        expect((await (await keyed()).verify()).problems).toEqual([`entry 6 was keyed with another audit key (${otherId}), not this relay's (${firstId})`]);
      });

      it("head() is the last entry; an empty log's is 0 and the genesis hash", async () => {
        const store = await keyed();
        expect(await store.head()).toEqual({ seq: 0, hash: GENESIS });
        expect(await store.verify({ seq: 0, hash: GENESIS })).toEqual({ ok: true, entries: 0, problems: [] });
        store.enqueue(record(1)); // head() writes what is queued first
        expect(await store.head()).toEqual({ seq: 1, hash: (await store.list())[0].hash });
      });
    });
  });
}

describe('audit store: postgres, what only a networked database needs', () => {
  let db: FreshDatabase;
  let pool: pg.Pool;
  beforeEach(async () => {
    db = await freshDatabase();
    pool = testPool(db.url);
    await migrate(pool);
  });
  afterEach(async () => {
    await pool.end();
    await db.drop();
  });

  const count = async () => (await pool.query<{ n: number }>('SELECT COUNT(*)::int AS n FROM audit')).rows[0].n;

  it("a turn's entries are written in one transaction", async () => {
    const store = await PostgresAuditStore.create(pool);
    for (let n = 1; n <= 50; n++) store.enqueue(record(n));
    await waitUntil(async () => (await count()) > 0, 'the turn written');
    expect(await count()).toBe(50);
    // Every row carries the id of the transaction that wrote it.
    expect((await pool.query('SELECT COUNT(DISTINCT xmin::text)::int AS n FROM audit')).rows[0].n).toBe(1);
  });

  it('a write that fails loses no enqueued entry: they wait, in order, for the next write; a failed append is told', async () => {
    const errors: Error[] = [];
    const store = await PostgresAuditStore.create(pool, { onError: (err) => errors.push(err) });
    await store.append(record(1));
    await pool.query('ALTER TABLE audit RENAME TO audit_away'); // the database refuses the writes for a while
    store.enqueue(record(2));
    store.enqueue(record(3));
    await waitUntil(() => errors.length > 0, 'the background write to fail');
    expect(errors[0].message).toMatch(/relation "audit" does not exist/);
    await expect(store.append(record(4))).rejects.toThrow(/relation "audit" does not exist/);
    await pool.query('ALTER TABLE audit_away RENAME TO audit');
    store.enqueue(record(5));
    expect((await store.list()).map((e) => [e.seq, e.cardId])).toEqual([1, 2, 3, 5].map((n, i) => [i + 1, record(n).cardId]));
    expect(await store.verify()).toEqual({ ok: true, entries: 4, problems: [] });
  });
});

describe('audit store: sqlite, its file locked by another program', () => {
  it('a write that fails loses no enqueued entry: they wait, in order, for the next write; a failed append is told', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'askrelay-audit-locked-'));
    const file = join(dir, 'askrelay.sqlite');
    const db = connect(file);
    // A short wait for the lock: the failure, not the relay's 5 s, is what is tested here.
    db.pragma('busy_timeout = 50');
    try {
      const errors: Error[] = [];
      const store = new AuditStore(db, { onError: (err) => errors.push(err) });
      store.append(record(1));
      const lock = await lockSqliteFile(file);
      try {
        store.enqueue(record(2));
        store.enqueue(record(3));
        await waitUntil(() => errors.length > 0, 'the write after the turn to fail');
        expect(errors.map((e) => e.message)).toEqual(['database is locked']);
        expect(() => store.append(record(4))).toThrow('database is locked');
      } finally {
        await lock.release();
      }
      store.enqueue(record(5));
      expect(store.list().map((e) => [e.seq, e.cardId])).toEqual([1, 2, 3, 5].map((n, i) => [i + 1, record(n).cardId]));
      expect(store.verify()).toEqual({ ok: true, entries: 4, problems: [] });
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
