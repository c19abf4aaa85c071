import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditStore, hashEntry, type AuditEntry, type AuditRecord } from '../../src/store/audit-store.js';

// The audit log's hash chain against a real SQLite file. Tampering is done the way someone
// with the file would do it: through a second better-sqlite3 connection, behind the store's back.

const GENESIS = '0'.repeat(64);

let dir: string;
let file: string;
let db: Database.Database;
let audit: AuditStore;
/** The tamperer's own connection to the same file. */
let other: Database.Database;

function open(path: string): Database.Database {
  const conn = new Database(path);
  conn.pragma('journal_mode = WAL');
  conn.pragma('busy_timeout = 5000');
  return conn;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'askrelay-audit-'));
  file = join(dir, 'askrelay.sqlite');
  db = open(file);
  audit = new AuditStore(db);
  other = open(file);
});
afterEach(() => {
  other.close();
  if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

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

/** Appends `n` entries and returns them. */
const fill = (n: number): AuditEntry[] => Array.from({ length: n }, (_, i) => audit.append(record(i + 1)));

describe('the chain', () => {
  it('enqueued entries are written together right after the turn, in order, behind earlier ones; reads see them at once', async () => {
    audit.enqueue(record(1));
    audit.enqueue(record(2));
    expect(other.prepare('SELECT COUNT(*) FROM audit').pluck().get()).toBe(0); // not written yet
    await new Promise((r) => setImmediate(r));
    expect(other.prepare('SELECT COUNT(*) FROM audit').pluck().get()).toBe(2);
    audit.enqueue(record(3));
    const fourth = audit.append(record(4)); // a direct append writes the queue first
    expect(fourth.seq).toBe(4);
    audit.enqueue(record(5));
    expect(audit.list().map((e) => [e.seq, e.cardId])).toEqual([1, 2, 3, 4, 5].map((n) => [n, record(n).cardId]));
    expect(audit.verify()).toEqual({ ok: true, entries: 5, problems: [] });
  });

  it('an empty log verifies', () => {
    expect(audit.list()).toEqual([]);
    expect(audit.verify()).toEqual({ ok: true, entries: 0, problems: [] });
  });

  it('append numbers the entries and links each to the hash of the one before', () => {
    const entries = fill(5);
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
    expect(audit.list()).toEqual(entries);
    expect(entries[1]).toEqual({ seq: 2, ...record(2), prevHash: entries[0].hash, hash: entries[1].hash });
    expect(audit.verify()).toEqual({ ok: true, entries: 5, problems: [] });
  });

  it('the hash covers every field', () => {
    const [entry] = fill(1);
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

  it('survives closing and opening the file again, and goes on from where it was', () => {
    const before = fill(3);
    other.close();
    db.close();
    db = open(file);
    other = open(file);
    audit = new AuditStore(db);
    expect(audit.list()).toEqual(before);
    const next = audit.append(record(4));
    expect(next).toMatchObject({ seq: 4, prevHash: before[2].hash });
    expect(audit.verify()).toEqual({ ok: true, entries: 4, problems: [] });
  });

  it('two connections appending in turn keep one chain', () => {
    const second = new AuditStore(other);
    const appended = Array.from({ length: 6 }, (_, i) => (i % 2 ? second : audit).append(record(i + 1)));
    expect(appended.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    for (let i = 1; i < appended.length; i++) expect(appended[i].prevHash).toBe(appended[i - 1].hash);
    expect(audit.verify()).toEqual({ ok: true, entries: 6, problems: [] });
    expect(second.verify()).toEqual({ ok: true, entries: 6, problems: [] });
  });
});

describe('verify finds tampering', () => {
  it('a row whose data was edited: "entry N was edited"', () => {
    fill(5);
    other.prepare(`UPDATE audit SET data = json_set(data, '$.actor.id', 'someone else') WHERE seq = 3`).run();
    expect(audit.verify()).toEqual({ ok: false, entries: 5, problems: ['entry 3 was edited'] });
  });

  it('an edited row whose hash was recomputed breaks the link to the next one', () => {
    const entries = fill(5);
    const { hash: _old, ...fields } = entries[3];
    const forged = { ...fields, surface: 'web' };
    const hash = hashEntry(forged);
    other.prepare('UPDATE audit SET data = ?, hash = ? WHERE seq = 4').run(JSON.stringify({ ...forged, hash }), hash);
    expect(audit.verify()).toEqual({ ok: false, entries: 5, problems: ['entry 5 does not follow entry 4'] });
  });

  it('a forged last entry with a recomputed hash is caught by the head', () => {
    const entries = fill(3);
    const { hash: _old, ...fields } = entries[2];
    const forged = { ...fields, detail: { action: 'answer', code: 'human_only' } };
    const hash = hashEntry(forged);
    other.prepare('UPDATE audit SET data = ?, hash = ? WHERE seq = 3').run(JSON.stringify({ ...forged, hash }), hash);
    expect(audit.verify()).toEqual({ ok: false, entries: 3, problems: ['the log head was edited'] });
  });

  it('a row whose stored prev_hash or hash column was edited', () => {
    fill(4);
    other.prepare(`UPDATE audit SET hash = ? WHERE seq = 2`).run('f'.repeat(64));
    const check = audit.verify();
    expect(check.ok).toBe(false);
    expect(check.problems).toContain('entry 2 was edited');
    expect(check.problems).toContain('entry 3 does not follow entry 2');
  });

  it('a row that is not an entry any more', () => {
    fill(3);
    other.prepare(`UPDATE audit SET data = '{"seq": 2}' WHERE seq = 2`).run();
    expect(audit.verify()).toEqual({ ok: false, entries: 3, problems: ['entry 2 is not a valid entry'] });
  });

  it('a deleted middle row is reported as removed', () => {
    fill(5);
    other.prepare('DELETE FROM audit WHERE seq = 3').run();
    const check = audit.verify();
    expect(check.ok).toBe(false);
    expect(check.entries).toBe(4);
    expect(check.problems).toHaveLength(1);
    expect(check.problems[0]).toMatch(/^entr(y|ies) 3(-3)? (was|were) removed$/);
  });

  it('several deleted middle rows', () => {
    fill(6);
    other.prepare('DELETE FROM audit WHERE seq IN (2, 3, 4)').run();
    expect(audit.verify()).toEqual({ ok: false, entries: 3, problems: ['entries 2-4 were removed'] });
  });

  it('a deleted first row', () => {
    fill(3);
    other.prepare('DELETE FROM audit WHERE seq = 1').run();
    const check = audit.verify();
    expect(check.ok).toBe(false);
    expect(check.problems).toHaveLength(1);
    expect(check.problems[0]).toMatch(/^entr(y|ies) 1(-1)? (was|were) removed$/);
  });

  it('a deleted last row is found through the head', () => {
    fill(5);
    other.prepare('DELETE FROM audit WHERE seq = 5').run();
    expect(audit.verify()).toEqual({ ok: false, entries: 4, problems: ['entries after 4 (up to 5) were removed'] });
  });

  it('every row deleted is found through the head', () => {
    fill(5);
    other.prepare('DELETE FROM audit').run();
    expect(audit.verify()).toEqual({ ok: false, entries: 0, problems: ['entries after 0 (up to 5) were removed'] });
  });

  it('a removed tail stays visible after new entries are appended', () => {
    fill(5);
    other.prepare('DELETE FROM audit WHERE seq = 5').run();
    const next = audit.append(record(6));
    expect(next.seq).toBe(6);
    const check = audit.verify();
    expect(check.ok).toBe(false);
    expect(check.problems).toHaveLength(1);
    expect(check.problems[0]).toMatch(/^entr(y|ies) 5(-5)? (was|were) removed$/);
  });

  it('a head that was edited or removed', () => {
    fill(3);
    other.prepare(`UPDATE audit_head SET hash = ?`).run('e'.repeat(64));
    expect(audit.verify()).toEqual({ ok: false, entries: 3, problems: ['the log head was edited'] });
    other.prepare('DELETE FROM audit_head').run();
    expect(audit.verify()).toEqual({ ok: false, entries: 3, problems: ['the log head was removed'] });
  });
});

describe('list', () => {
  it('pages oldest first with after (the last seq seen) and limit', () => {
    const entries = fill(5);
    expect(audit.list(0, 2)).toEqual(entries.slice(0, 2));
    expect(audit.list(2, 2)).toEqual(entries.slice(2, 4));
    expect(audit.list(4, 2)).toEqual(entries.slice(4));
    expect(audit.list(5, 2)).toEqual([]);
    expect(audit.list(3)).toEqual(entries.slice(3));
    expect(audit.list()).toEqual(entries);
    // Paging through to the end visits every entry once, in order.
    const seen: number[] = [];
    for (let after = 0, page = audit.list(after, 2); page.length; after = page.at(-1)!.seq, page = audit.list(after, 2)) {
      seen.push(...page.map((e) => e.seq));
    }
    expect(seen).toEqual([1, 2, 3, 4, 5]);
  });

  it('after a removed row, paging skips the gap', () => {
    fill(5);
    other.prepare('DELETE FROM audit WHERE seq = 2').run();
    expect(audit.list(1, 2).map((e) => e.seq)).toEqual([3, 4]);
  });
});

describe('the keyed chain (an HMAC under a key kept outside the database)', () => {
  const KEY = Buffer.from('the audit key, kept outside the database');
  const OTHER = Buffer.from('another audit key, not the one it was written with');
  const keyed = (key = KEY) => new AuditStore(db, { key });
  const fillWith = (store: AuditStore, from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => store.append(record(from + i)));

  /** Rewrites entries `from`… as the tamperer would: each edited by `edit`, re-hashed with plain SHA-256 and re-linked, the head moved along. */
  function rewritePlain(from: number, edit: (e: Omit<AuditEntry, 'hash'>) => Omit<AuditEntry, 'hash'> = (e) => e): void {
    const rows = other.prepare('SELECT data FROM audit WHERE seq >= ? ORDER BY seq').pluck().all(from) as string[];
    let prev = from === 1 ? GENESIS : (other.prepare('SELECT hash FROM audit WHERE seq = ?').pluck().get(from - 1) as string);
    for (const data of rows) {
      const { hash: _old, alg: _alg, keyId: _keyId, ...fields } = JSON.parse(data) as AuditEntry;
      const forged = edit({ ...fields, prevHash: prev });
      const hash = hashEntry(forged);
      other.prepare('UPDATE audit SET data = ?, prev_hash = ?, hash = ? WHERE seq = ?').run(JSON.stringify({ ...forged, hash }), prev, hash, forged.seq);
      prev = hash;
    }
    other.prepare('UPDATE audit_head SET seq = (SELECT MAX(seq) FROM audit), hash = ?').run(prev);
  }

  it('every entry is marked hmac-sha256 with the key\'s id, and its hash is not the plain SHA-256', () => {
    const store = keyed();
    const entries = fillWith(store, 1, 3);
    for (const entry of entries) {
      expect(entry).toMatchObject({ alg: 'hmac-sha256', keyId: expect.stringMatching(/^[0-9a-f]{16}$/) });
      const { hash, ...fields } = entry;
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      expect(hashEntry(fields)).not.toBe(hash);
    }
    expect(new Set(entries.map((e) => e.keyId)).size).toBe(1);
    expect(store.verify()).toEqual({ ok: true, entries: 3, problems: [] });
    expect(store.keyedNotice).toBeUndefined(); // an empty log is keyed from its first entry: nothing to say
    expect(keyed(OTHER).list().at(-1)!.keyId).not.toBe(entries[0].keyId); // the id names the key
  });

  it('an entry edited and every later hash recomputed with plain SHA-256 fails verify', () => {
    const store = keyed();
    fillWith(store, 1, 5);
    rewritePlain(3, (e) => (e.seq === 3 ? { ...e, actor: { kind: 'human', id: 'operator' } } : e));
    expect(store.verify()).toEqual({ ok: false, entries: 5, problems: ['entry 3 is not keyed', 'entry 4 is not keyed', 'entry 5 is not keyed'] });
  });

  it('the markers kept but the hash recomputed with plain SHA-256: "entry N was edited"', () => {
    const store = keyed();
    const entries = fillWith(store, 1, 3);
    const { hash: _old, ...fields } = entries[1];
    const forged = { ...fields, surface: 'web' };
    const hash = hashEntry(forged);
    other.prepare('UPDATE audit SET data = ?, hash = ? WHERE seq = 2').run(JSON.stringify({ ...forged, hash }), hash);
    expect(store.verify().problems).toEqual(['entry 2 was edited', 'entry 3 does not follow entry 2']);
  });

  it('the whole log rewritten with plain SHA-256 is caught: a keyed relay\'s last entry is always keyed', () => {
    const store = keyed();
    fillWith(store, 1, 4);
    rewritePlain(1);
    expect(store.verify()).toEqual({ ok: false, entries: 4, problems: ['entry 4 is not keyed, though this relay keys every entry it writes: keyed entries after it were removed or rewritten'] });
  });

  it('the tail deleted and the head rewritten is caught by a pinned head', () => {
    const store = keyed();
    fillWith(store, 1, 5);
    const pinned = store.head();
    expect(pinned).toEqual({ seq: 5, hash: store.list().at(-1)!.hash });
    expect(store.verify(pinned)).toEqual({ ok: true, entries: 5, problems: [] });
    other.prepare('DELETE FROM audit WHERE seq > 3').run();
    other.prepare('UPDATE audit_head SET seq = 3, hash = (SELECT hash FROM audit WHERE seq = 3)').run();
    // What is left is a genuine chain: only the pin, kept elsewhere, knows it was longer.
    expect(store.verify()).toEqual({ ok: true, entries: 3, problems: [] });
    expect(store.verify(pinned)).toEqual({ ok: false, entries: 3, problems: ['the log ends at entry 3, before the pinned head (entry 5): entries were removed'] });
  });

  it('the tail deleted and written again (so the pinned seq is back) is caught by the pin\'s hash', () => {
    const store = keyed();
    fillWith(store, 1, 5);
    const pinned = store.head();
    other.prepare('DELETE FROM audit WHERE seq > 3').run();
    other.prepare('UPDATE audit_head SET seq = 3, hash = (SELECT hash FROM audit WHERE seq = 3)').run();
    for (const n of [14, 15, 16]) store.append(record(n)); // the relay goes on: entries 4-6 again, other ones
    const check = store.verify(pinned);
    expect(check.ok).toBe(false);
    expect(check.problems).toEqual([`entry 5 is not the pinned head (its hash is ${store.list()[4].hash.slice(0, 16)}…, the pin's ${pinned.hash.slice(0, 16)}…): the log was rewritten`]);
    expect(store.verify({ seq: 9, hash: pinned.hash }).problems).toEqual(['the log ends at entry 6, before the pinned head (entry 9): entries were removed']);
    other.prepare('DELETE FROM audit WHERE seq = 2').run();
    expect(store.verify({ seq: 2, hash: pinned.hash }).problems).toContain('the pinned head (entry 2) was removed');
  });

  it('an old unkeyed log keeps verifying: keyed from the next entry on, and the switch is recorded', () => {
    const old = fill(3); // written before there was a key
    const store = keyed();
    expect(store.keyedNotice).toBe('The audit log is keyed from entry 4 on; the 3 entries before it stay plain SHA-256 and are checked as such.');
    const entries = store.list();
    expect(entries.slice(0, 3)).toEqual(old);
    expect(entries[3]).toMatchObject({ seq: 4, event: 'audit.keyed', actor: { kind: 'system', id: 'relay' }, alg: 'hmac-sha256', detail: { algorithm: 'hmac-sha256', keyId: entries[3].keyId } });
    fillWith(store, 5, 7);
    expect(store.verify()).toEqual({ ok: true, entries: 7, problems: [] });
    // Opened again with the same key: nothing more to record, and the old entries still verify.
    const again = keyed();
    expect(again.keyedNotice).toBeUndefined();
    expect(again.verify()).toEqual({ ok: true, entries: 7, problems: [] });
    // An unkeyed entry after the switch (an older relay still writing, or a forger) is named.
    const last = again.list().at(-1)!;
    const base = { ...record(8), seq: 8, prevHash: last.hash };
    const hash = hashEntry(base);
    other.prepare('INSERT INTO audit (seq, data, prev_hash, hash) VALUES (?, ?, ?, ?)').run(8, JSON.stringify({ ...base, hash }), last.hash, hash);
    other.prepare('UPDATE audit_head SET seq = 8, hash = ?').run(hash);
    expect(again.verify().problems).toEqual(['entry 8 is not keyed']);
  });

  it('an old log truncated back to before the switch is caught', () => {
    fill(3);
    const store = keyed();
    fillWith(store, 5, 6);
    other.prepare('DELETE FROM audit WHERE seq > 3').run();
    other.prepare('UPDATE audit_head SET seq = 3, hash = (SELECT hash FROM audit WHERE seq = 3)').run();
    expect(store.verify().problems).toEqual(['entry 3 is not keyed, though this relay keys every entry it writes: keyed entries after it were removed or rewritten']);
  });

  it('a wrong key or none is named, once for the whole run of entries', () => {
    const first = keyed();
    fillWith(first, 1, 5);
    const firstId = first.list()[0].keyId!;

    const none = new AuditStore(db);
    expect(none.verify()).toEqual({ ok: false, entries: 5, problems: ['entries 1-5 are keyed, and this relay has no audit key to check them with'] });

    const wrong = keyed(OTHER);
    const entries = wrong.list();
    const otherId = entries[5].keyId!;
    expect(otherId).not.toBe(firstId);
    expect(entries[5]).toMatchObject({ seq: 6, event: 'audit.keyed', detail: { keyId: otherId, previousKeyId: firstId } });
    expect(wrong.keyedNotice).toBe(
      `The audit log's last entry was keyed with another key (${firstId}), not this relay's (${otherId}); entries from 6 on are keyed with this one, and "askrelay audit verify" reports the older keyed entries until their key is back.`,
    );
    expect(wrong.verify()).toEqual({ ok: false, entries: 6, problems: [`entries 1-5 were keyed with another audit key (${firstId}), not this relay's (${otherId})`] });
    // With the right key back, all of it verifies: the switch entry is keyed with the other key.
    expect(keyed().verify().problems).toEqual([`entry 6 was keyed with another audit key (${otherId}), not this relay's (${firstId})`]);
  });

  it('head() is the last entry; an empty log\'s is 0 and the genesis hash', () => {
    const store = keyed();
    expect(store.head()).toEqual({ seq: 0, hash: GENESIS });
    expect(store.verify({ seq: 0, hash: GENESIS })).toEqual({ ok: true, entries: 0, problems: [] });
    store.enqueue(record(1)); // head() writes what is queued first
    expect(store.head()).toEqual({ seq: 1, hash: store.list()[0].hash });
  });
});
