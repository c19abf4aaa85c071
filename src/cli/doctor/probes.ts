import Database from 'better-sqlite3';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync, statfsSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { openFailure, refuseUnwritable } from '../../store/sqlite-file.js';
import { SqliteStore } from '../../store/sqlite-store.js';
import { describeFailure } from '../client.js';
import type { HttpAnswer, ProbeRequest } from './endpoints.js';
import type { AppliedMigration, FileFacts, FolderFacts, SqliteFacts } from './verdicts.js';

// askrelay doctor's I/O: each probe looks at one thing and returns plain facts, or the reason
// it could not. Probes only read: the SQLite file is opened read-only, the database is asked
// SELECTs, the HTTP calls are the harmless ones endpoints.ts names. None of them throws.

/** Wording for a request that timed out, with the timeout in it. */
const reasonOf = (err: unknown, timeoutMs: number) => {
  const reason = describeFailure(err);
  return reason === 'no response in time' ? `no response within ${timeoutMs / 1000} s` : reason;
};

/** Any HTTP response counts as an answer (redirects too: they are not followed). */
export async function httpProbe(request: ProbeRequest, timeoutMs: number): Promise<HttpAnswer> {
  try {
    const signal = AbortSignal.timeout(timeoutMs);
    const response = await fetch(request.url, { ...request.init, redirect: 'manual', signal });
    const text = await response.text().catch(() => '');
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: the text stays as the body.
    }
    return { answered: true, status: response.status, body };
  } catch (err) {
    return { answered: false, reason: reasonOf(err, timeoutMs) };
  }
}

export function folderFacts(path: string): FolderFacts {
  const me = process.getuid?.();
  try {
    const stat = statSync(path);
    let writable = true;
    try {
      accessSync(path, constants.W_OK | constants.X_OK);
    } catch {
      writable = false;
    }
    return { path, exists: true, isDirectory: stat.isDirectory(), mode: stat.mode & 0o777, uid: stat.uid, writable, ...(me !== undefined ? { me } : {}) };
  } catch {
    return { path, exists: false };
  }
}

/** Secret files are a few bytes; a larger one is judged by its mode only. */
const MAX_TEXT_BYTES = 64 * 1024;

/** A file's mode, and with `read` its text trimmed (to judge a secret's length; never printed). */
export function fileFacts(path: string, read = false): FileFacts {
  try {
    const stat = statSync(path);
    const text = read && stat.isFile() && stat.size <= MAX_TEXT_BYTES ? readFileSync(path, 'utf8').trim() : undefined;
    return { path, exists: true, mode: stat.mode & 0o777, ...(text !== undefined ? { text } : {}) };
  } catch {
    return { path, exists: false };
  }
}

/** Free bytes for unprivileged users where `path` is (or, while it does not exist, its nearest parent). */
export function freeSpace(path: string): { where: string; free: number } | { where: string; error: string } {
  let where = path;
  while (!existsSync(where) && dirname(where) !== where) where = dirname(where);
  try {
    const stats = statfsSync(where);
    return { where, free: Number(stats.bavail) * Number(stats.bsize) };
  } catch (err) {
    return { where, error: (err as Error).message };
  }
}

/** Every table (but SQLite's own) with its columns. */
function tablesOf(db: Database.Database): Record<string, string[]> {
  const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
  return Object.fromEntries(names.map((name) => [name, (db.pragma(`table_info(${JSON.stringify(name)})`) as { name: string }[]).map((c) => c.name)]));
}

/**
 * The tables and columns a fresh store of this askrelay makes: the stores' own schemas, run on
 * a scratch file (so the list can never drift from what "askrelay serve" makes).
 */
export function expectedSqliteTables(): Record<string, string[]> {
  const scratch = mkdtempSync(join(tmpdir(), 'askrelay-doctor-'));
  try {
    const file = join(scratch, 'fresh.sqlite');
    new SqliteStore(file).close();
    const db = new Database(file, { readonly: true });
    try {
      return tablesOf(db);
    } finally {
      db.close();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** How long a read waits out the relay's write lock. */
const BUSY_MS = 2000;

/** The relay's SQLite file, opened read-only: writable for the relay, PRAGMA quick_check, its tables. */
export function sqliteFacts(file: string): SqliteFacts {
  if (!existsSync(file)) return { exists: false };
  try {
    // The sentence "askrelay serve" would stop with, when the file (or its -wal, -shm) is read-only to us.
    refuseUnwritable(file);
  } catch (err) {
    return { exists: true, error: (err as Error).message };
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma(`busy_timeout = ${BUSY_MS}`);
    const quickCheck = (db.pragma('quick_check') as { quick_check: string }[]).map((row) => row.quick_check);
    return { exists: true, quickCheck, tables: tablesOf(db) };
  } catch (err) {
    return { exists: true, error: openFailure(file, err, BUSY_MS).message };
  } finally {
    db?.close();
  }
}

export type PostgresFacts =
  | { reachable: false; reason: string }
  /** `applied` undefined: no schema_migrations table; `vapid`: the stored key pair's JSON, if any. */
  | { reachable: true; applied?: AppliedMigration[]; vapid?: string };

/** The database at `url`, asked SELECTs only; `pg` loads here, for a relay configured with one. */
export async function postgresFacts(url: string, timeoutMs: number): Promise<PostgresFacts> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  // A connection the server drops after the checks must not end the process with an error.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    await client.end().catch(() => {});
    const reason = (err as Error).message === 'timeout expired' || /timeout/i.test((err as Error).message) ? `no answer within ${timeoutMs / 1000} s` : reasonOf(err, timeoutMs);
    return { reachable: false, reason };
  }
  try {
    const present = async (table: string) => (await client.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [table])).rows[0]?.present === true;
    const applied = (await present('schema_migrations'))
      ? (await client.query<AppliedMigration>('SELECT version, name FROM schema_migrations ORDER BY version')).rows.map((row) => ({ version: Number(row.version), name: row.name }))
      : undefined;
    const vapid = (await present('relay_settings'))
      ? (await client.query<{ value: string }>("SELECT value FROM relay_settings WHERE name = 'vapid'")).rows[0]?.value
      : undefined;
    return { reachable: true, ...(applied ? { applied } : {}), ...(vapid !== undefined ? { vapid } : {}) };
  } catch (err) {
    return { reachable: false, reason: `it answered, but reading its schema failed: ${(err as Error).message}` };
  } finally {
    await client.end().catch(() => {});
  }
}
