import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';

// One relay per data folder: two would share the SQLite file, the agents' folders and
// the secrets, and each would take the other's waiting cards for its own. The lock file
// names the relay holding the folder; a relay killed without cleaning up (SIGKILL, a
// power cut) leaves it behind, so a lock whose process is gone is replaced.

export const LOCK_FILE = 'askrelay.lock';

const LockFacts = z.object({ pid: z.number().int().positive(), host: z.string(), startedAt: z.string() });
type LockFacts = z.infer<typeof LockFacts>;

export interface FolderLock {
  /** A sentence for the operator when a stale lock was replaced. */
  notice?: string;
  /** Removes the lock file (only while it is still ours); safe to call more than once. */
  release(): void;
}

/** Lock files this process holds, by path: a second relay of this same process is refused too. */
const held = new Map<string, LockFacts>();

function refusal(facts: LockFacts, dir: string): Error {
  const who = facts.host === hostname() ? `pid ${facts.pid}` : `pid ${facts.pid} on host ${facts.host}`;
  return new Error(`Another askrelay (${who}, started ${facts.startedAt}) is running on the data folder ${dir}; stop it first, or give this one another --data.`);
}

/** The lock's contents, or undefined when it is unreadable, empty or not ours to read. */
function readLock(file: string): LockFacts | undefined {
  try {
    const parsed = LockFacts.safeParse(JSON.parse(readFileSync(file, 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Writes the lock with O_EXCL; false when a lock file is already there. */
function create(file: string, facts: LockFacts): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, `${JSON.stringify(facts)}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/**
 * Takes <data>/askrelay.lock, or throws the sentence naming the relay that holds it. A
 * lock from another host is never taken over: whether that relay runs cannot be seen
 * from here.
 */
export function lockDataFolder(dataDir: string): FolderLock {
  const dir = resolve(dataDir);
  const file = join(dir, LOCK_FILE);
  const ours = held.get(file);
  if (ours) throw refusal(ours, dataDir);
  const facts: LockFacts = { pid: process.pid, host: hostname(), startedAt: new Date().toISOString() };
  let notice: string | undefined;
  // A few rounds: another relay starting at the same moment may replace a stale lock
  // between our read and our create; then its lock is read and judged on the next round.
  for (let round = 0; round < 5; round++) {
    if (create(file, facts)) {
      held.set(file, facts);
      return { ...(notice ? { notice } : {}), release: () => release(file, facts) };
    }
    let found: LockFacts | undefined;
    try {
      found = readLock(file);
    } catch {
      continue; // removed between create and read: try again
    }
    if (found) {
      // Our own pid without a lock held here: a relay of an earlier life with the same pid
      // (a container's pid 1 restarted), or one of ours that never closed.
      const ownStale = found.pid === process.pid;
      if (found.host !== facts.host || (!ownStale && alive(found.pid))) throw refusal(found, dataDir);
      notice = `Replaced the lock of a relay that stopped without cleaning up (pid ${found.pid}).`;
    } else {
      notice = `Replaced the lock file ${file}, which could not be read.`;
    }
    try {
      // Only the lock judged stale: one another relay has just put in its place is judged anew.
      const again = readLock(file);
      if (JSON.stringify(again) !== JSON.stringify(found)) continue;
      unlinkSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
  }
  throw new Error(`Could not take the lock ${file}: other relays keep starting on the data folder ${dataDir}.`);
}

function release(file: string, facts: LockFacts): void {
  if (held.get(file) !== facts) return;
  held.delete(file);
  try {
    // A lock another relay took over (ours was judged stale) is not ours to remove.
    const now = readLock(file);
    if (now && (now.pid !== facts.pid || now.startedAt !== facts.startedAt)) return;
    unlinkSync(file);
  } catch {
    // Gone already, or the folder with it: nothing to release.
  }
}
