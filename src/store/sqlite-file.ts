import Database from 'better-sqlite3';
import { accessSync, constants } from 'node:fs';
import { isSqliteBusy, isSqliteUnwritable } from '../errors.js';

// Opening the relay's SQLite file, and what is said when it cannot be used: a file this
// process may not write (mode 0400, another user's, an immutable file, a read-only mount),
// a damaged one (garbage, cut short), or one another program holds locked. Each is one
// sentence naming the file and the cause, and none of them writes a byte to the file.

/** How long a statement waits for another connection's write lock before SQLite says "database is locked". */
export const BUSY_TIMEOUT_MS = 5000;

/** A database file the relay cannot use, with the sentence for the operator. */
export class StoreFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreFileError';
  }
}

const ACCESS_CAUSES: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted: the file is immutable (chattr +i) or otherwise protected',
  EROFS: 'the file system it is on is mounted read-only',
};

/**
 * Refuses a database file (or its -wal or -shm) this process may not read and write, before
 * SQLite opens it: SQLite would open such a file read-only without a word, and the relay
 * would then fail at its first write. The relay tightens modes (0600) but never grants
 * itself write access to a file someone made read-only.
 */
export function refuseUnwritable(file: string): void {
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      accessSync(path, constants.R_OK | constants.W_OK);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? '';
      if (code === 'ENOENT') continue;
      throw new StoreFileError(
        `The database ${path} cannot be written (${ACCESS_CAUSES[code] ?? code}). askrelay must read and write it: make it writable by the user running askrelay, or start with another --data. The file was left as it is.`,
      );
    }
  }
}

/** SQLite's own words for a failure, for the end of a sentence. */
const said = (err: unknown) => (err as Error)?.message ?? String(err);
const codeOf = (err: unknown) => String((err as { code?: unknown } | null)?.code ?? '');

/** The sentence for what SQLite reported while the file was opened; other errors as they are. */
export function openFailure(file: string, err: unknown, busyMs: number): Error {
  const code = codeOf(err);
  if (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')) {
    return new StoreFileError(
      `The database ${file} is damaged or is not an SQLite database (SQLite: ${said(err)}). askrelay left it as it is: restore it from a backup, or move it away to start with an empty one.`,
    );
  }
  if (isSqliteBusy(code)) {
    return new StoreFileError(
      `The database ${file} is locked by another program (SQLite: ${said(err)}, after waiting ${busyMs / 1000} s). Close what holds it (an sqlite3 shell inside a transaction, a backup tool, a relay started on a copy of this folder) and start again.`,
    );
  }
  if (isSqliteUnwritable(code) || code === 'SQLITE_PERM') {
    return new StoreFileError(`The database ${file} cannot be written (SQLite: ${said(err)}). Make it and its folder writable by the user running askrelay, or start with another --data.`);
  }
  return err as Error;
}

/**
 * Opens the file with the relay's settings and takes the write lock once, so that a lock
 * another program holds is found here, at the start, rather than at the first answer.
 * `prepare` runs on the open connection (schemas, the stores' statements); whatever fails
 * in it or before closes the connection and is reported by openFailure.
 */
export function openSqlite<T>(file: string, options: { sync: 'normal' | 'full'; busyMs?: number }, prepare: (db: Database.Database) => T): { db: Database.Database; prepared: T } {
  const busyMs = options.busyMs ?? BUSY_TIMEOUT_MS;
  let db: Database.Database | undefined;
  try {
    db = new Database(file);
    // First: every statement after it waits out another connection's lock.
    db.pragma(`busy_timeout = ${busyMs}`);
    db.pragma('journal_mode = WAL');
    db.pragma(`synchronous = ${options.sync === 'full' ? 'FULL' : 'NORMAL'}`);
    if (file !== ':memory:') db.transaction(() => {}).immediate();
    return { db, prepared: prepare(db) };
  } catch (err) {
    db?.close();
    throw openFailure(file, err, busyMs);
  }
}
