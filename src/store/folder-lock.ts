import Database from 'better-sqlite3';
import { accessSync, constants, existsSync, readFileSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { privateFileIfExists, writeSecretFile } from './secret-file.js';

// One relay per data folder: two would share the SQLite file, the agents' folders and
// the secrets, and each would take the other's waiting cards for its own.
//
// The lock is one the kernel holds: SQLite's write lock (an fcntl lock) on a small lock
// database, taken with BEGIN IMMEDIATE and kept for the relay's life. The kernel drops it
// the moment the process dies, whatever killed it, before the process is even reaped; so a
// relay restarted at once, a container recreated on the same volume with a new hostname or
// a pid now used by another program are never taken for a running relay. Guessing from a
// pid (alive? same host?) got each of those wrong.
//
// Beside it, askrelay.lock names the holder (pid, host, start time) for the sentence that
// refuses a second relay. It is only ever read for that sentence: a file left behind by a
// killed relay is no obstacle.
//
// Never open the lock database from this process by other means (fs.open, a second
// better-sqlite3 handle held open): closing any descriptor of the file drops fcntl locks.

export const LOCK_FILE = 'askrelay.lock';
export const LOCK_DB_FILE = 'askrelay.lock.db';

const LockFacts = z.object({ pid: z.number().int().positive(), host: z.string(), startedAt: z.string() });
type LockFacts = z.infer<typeof LockFacts>;

export interface FolderLock {
  /** A sentence for the operator: a holder's file left behind, or a folder that could not be locked. */
  notice?: string;
  /** Lets go of the folder; safe to call more than once. */
  release(): void;
}

/** How long a start waits for a lock held a moment (askrelay doctor's probe) before refusing. */
const BUSY_MS = 250;

/** Folders this process holds, by path: a second relay of this same process is refused too. */
const held = new Map<string, LockFacts>();

const pidOf = (facts: LockFacts) => (facts.host === hostname() ? `pid ${facts.pid}` : `pid ${facts.pid} on host ${facts.host}`);
const who = (facts: LockFacts) => `${pidOf(facts)}, started ${facts.startedAt}`;

function refusal(facts: LockFacts | undefined, dir: string): Error {
  const other = facts ? `Another askrelay (${who(facts)})` : 'Another askrelay';
  return new Error(`${other} is running on the data folder ${dir}; stop it first, or give this one another --data.`);
}

/** The holder's facts, or undefined when there is no readable file naming one. */
export function readHolder(dir: string): LockFacts | undefined {
  try {
    const parsed = LockFacts.safeParse(JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

type Attempt = { db: Database.Database } | { busy: true } | { readOnly: string };

/** Why the lock file cannot be written (a read-only mount, another user's file), or undefined when it can. */
function unwritable(file: string): string | undefined {
  try {
    accessSync(existsSync(file) ? file : dirname(file), constants.W_OK);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/** Opens the lock database and takes its write lock; busy when another process (or handle) holds it. */
function attempt(file: string): Attempt {
  // SQLite opens a file it may not write read-only, where its lock is no lock at all: ask first.
  const readOnly = unwritable(file);
  if (readOnly) return { readOnly };
  const db = new Database(file, { timeout: BUSY_MS });
  try {
    // Nothing is ever written: no journal file beside it either.
    db.pragma('journal_mode = MEMORY');
    db.exec('BEGIN IMMEDIATE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') return { busy: true };
    throw err;
  }
  privateFileIfExists(file);
  return { db };
}

/**
 * Takes the data folder for this relay, or throws the sentence naming the relay that holds
 * it. A folder that cannot be written (a read-only mount) cannot be locked: the start goes
 * on with a notice saying so, and the store then says whether it can work there.
 */
export function lockDataFolder(dataDir: string): FolderLock {
  const dir = resolve(dataDir);
  const ours = held.get(dir);
  if (ours) throw refusal(ours, dataDir);
  const got = attempt(join(dir, LOCK_DB_FILE));
  if ('busy' in got) throw refusal(readHolder(dir), dataDir);
  if ('readOnly' in got) {
    return { notice: `The data folder ${dataDir} could not be locked (${got.readOnly}): nothing keeps a second relay off it while this one runs.`, release: () => {} };
  }
  const left = readHolder(dir);
  const facts: LockFacts = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  try {
    writeSecretFile(join(dir, LOCK_FILE), `${JSON.stringify(facts)}\n`);
  } catch {
    // Only the refusal's sentence reads it; the lock itself is held.
  }
  held.set(dir, facts);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    held.delete(dir);
    // The file first, while the lock is still ours: a relay taking the folder next writes its own.
    if (readHolder(dir)?.startedAt === facts.startedAt) rmSync(join(dir, LOCK_FILE), { force: true });
    got.db.close();
  };
  const notice = left ? `Replaced the lock of a relay that stopped without cleaning up (${pidOf(left)}).` : undefined;
  return { ...(notice ? { notice } : {}), release };
}

export type LockState = { state: 'free' } | { state: 'held'; holder?: LockFacts } | { state: 'unlockable'; reason: string };

/**
 * Whether a relay holds the folder now (askrelay doctor): takes the lock for an instant and
 * lets it go. A relay starting in that instant waits for it (BUSY_MS) rather than failing.
 */
export function folderLockState(dataDir: string): LockState {
  const dir = resolve(dataDir);
  if (held.has(dir)) return { state: 'held', holder: held.get(dir)! };
  // No lock database: no relay has run here since it was made (and the probe makes none).
  if (!existsSync(join(dir, LOCK_DB_FILE))) return { state: 'free' };
  const got = attempt(join(dir, LOCK_DB_FILE));
  if ('busy' in got) {
    const holder = readHolder(dir);
    return holder ? { state: 'held', holder } : { state: 'held' };
  }
  if ('readOnly' in got) return { state: 'unlockable', reason: got.readOnly };
  got.db.close();
  return { state: 'free' };
}
