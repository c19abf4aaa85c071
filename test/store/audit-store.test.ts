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
