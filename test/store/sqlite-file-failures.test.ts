import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DB_FILE } from '../../src/start.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { LOCK_DB_FILE } from '../../src/store/folder-lock.js';
import { cardOf } from '../support/card-fixture.js';
import { serveOnce } from '../support/cli.js';
import { lockSqliteFile } from '../support/sqlite-locker.js';

// `askrelay serve` on a data folder whose SQLite file it cannot use: garbage bytes, a
// database cut short, a file another program holds locked, a file it may not write. Each
// time the relay refuses to start (exit 1) with one sentence naming the file and the cause,
// and leaves the file byte for byte (and mode for mode) as it was; once the cause is gone
// (the lock released), it starts on the same file with everything in it.
//
// Read-only: a file of mode 0400 stops its owner from writing, but not root, whom file modes
// do not stop. Run as root, the relay is started as the user nobody (uid 65534), owning the
// folder and the 0400 file: the way a relay runs as a service user whose file was made
// read-only. Run as anyone else, it runs as that user on a file of their own.

const scratch = mkdtempSync(join(tmpdir(), 'askrelay-sqlite-file-'));
// Reachable by the user the relay may run as (nobody, below), though not listable.
chmodSync(scratch, 0o711);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const AS_ROOT = process.getuid?.() === 0;
const NOBODY = 65534;

/** Runs `askrelay serve` until it refuses or has started (then stops it). */
const serve = (data: string, as?: number) => serveOnce(data, { cwd: scratch, env: { ASKRELAY_TOKEN: 'sqlite-file-token-0123456789' }, as });

let n = 0;
/** A fresh data folder (0700), as `askrelay serve` makes it. */
function folder(): { data: string; file: string } {
  const data = join(scratch, `data-${++n}`);
  mkdirSync(data, { mode: 0o700 });
  return { data, file: join(data, DB_FILE) };
}

const CARD = cardOf([{ text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }], {
  createdAt: '2026-12-01T00:00:00.000Z',
  expiresAt: '2099-12-01T00:00:00.000Z',
});

/** A relay's database with a pending card and a few hundred audit entries (so that it spans many pages), all in the main file. */
function relayDatabase(file: string): void {
  const store = new SqliteStore(file);
  store.insertCard(CARD);
  for (let i = 0; i < 300; i++) store.audit.append({ at: CARD.createdAt, event: 'card.refused', cardId: CARD.id, actor: { kind: 'agent', id: `a${i}` }, surface: 'api', detail: { action: 'answer', code: 'human_only' } });
  store.close();
}

/** The folder's files and each one's bytes and mode: what "left as it was" compares. */
function snapshot(data: string): Record<string, { mode: number; sha: string }> {
  return Object.fromEntries(
    readdirSync(data).map((name) => {
      const path = join(data, name);
      return [name, { mode: statSync(path).mode & 0o777, sha: createHash('sha256').update(readFileSync(path)).digest('hex') }];
    }),
  );
}

describe('askrelay serve on a SQLite file it cannot use', { timeout: 120_000 }, () => {
  it('garbage bytes: exit 1, "not an SQLite database", the file untouched', async () => {
    const { data, file } = folder();
    writeFileSync(file, randomBytes(20_000), { mode: 0o600 });
    const before = readFileSync(file);
    const run = await serve(data);
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: `askrelay serve: The database ${file} is damaged or is not an SQLite database (SQLite: file is not a database). askrelay left it as it is: restore it from a backup, or move it away to start with an empty one.\n`,
    });
    expect(readFileSync(file).equals(before)).toBe(true);
    // Nothing beside it either: no -wal or -shm, and the folder's lock let go (its holder file
    // gone; the empty lock database stays, as it always does, so every relay locks one file).
    expect(readdirSync(data).filter((f) => f.startsWith('askrelay.')).sort()).toEqual([LOCK_DB_FILE, DB_FILE]);
  });

  it('a database cut short: exit 1, "malformed", the file untouched', async () => {
    const { data, file } = folder();
    relayDatabase(file);
    truncateSync(file, Math.floor(statSync(file).size / 2));
    const before = snapshot(data);
    const run = await serve(data);
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: `askrelay serve: The database ${file} is damaged or is not an SQLite database (SQLite: database disk image is malformed). askrelay left it as it is: restore it from a backup, or move it away to start with an empty one.\n`,
    });
    // The secrets made on this first start (audit.key, vapid.json) aside, the folder is as it was.
    const after = snapshot(data);
    expect(after[DB_FILE]).toEqual(before[DB_FILE]);
    expect(Object.keys(after).filter((f) => f.startsWith('askrelay.')).sort()).toEqual([LOCK_DB_FILE, DB_FILE]);
  });

  it('locked by another program past the busy timeout: exit 1, "locked", the file untouched; released, the relay starts with its card', async () => {
    const { data, file } = folder();
    relayDatabase(file);
    const lock = await lockSqliteFile(file);
    let released = false;
    try {
      const before = readFileSync(file);
      const run = await serve(data);
      expect(run).toEqual({
        code: 1,
        stdout: '',
        stderr: `askrelay serve: The database ${file} is locked by another program (SQLite: database is locked, after waiting 5 s). Close what holds it (an sqlite3 shell inside a transaction, a backup tool, a relay started on a copy of this folder) and start again.\n`,
      });
      expect(readFileSync(file).equals(before)).toBe(true);
      expect(existsSync(join(data, 'askrelay.lock'))).toBe(false);
      await lock.release();
      released = true;
    } finally {
      if (!released) await lock.release();
    }
    const again = await serve(data);
    expect(again.code).toBeNull();
    expect(again.stdout).toContain(`Data: ${data} (1 pending card)\n`);
  });

  it('a file the relay may not write (mode 0400): exit 1, "cannot be written", bytes and mode untouched', async () => {
    const { data, file } = folder();
    relayDatabase(file);
    chmodSync(file, 0o400);
    if (AS_ROOT) for (const path of [data, ...readdirSync(data).map((f) => join(data, f))]) chownSync(path, NOBODY, NOBODY);
    const before = snapshot(data);
    const run = await serve(data, AS_ROOT ? NOBODY : undefined);
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: `askrelay serve: The database ${file} cannot be written (permission denied). askrelay must read and write it: make it writable by the user running askrelay, or start with another --data. The file was left as it is.\n`,
    });
    expect(snapshot(data)[DB_FILE]).toEqual(before[DB_FILE]);
    expect(before[DB_FILE].mode).toBe(0o400);
  });
});
