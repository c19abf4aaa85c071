import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fchmodSync, fsyncSync, linkSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

// Every file of the data folder that holds a secret (the token, the audit key, the VAPID
// keys) is written here: a temporary file beside it, readable by the owner only, synced to
// disk, then renamed (or linked) into place. A crash mid-write leaves the old file or no
// file, never an empty or half-written one (an empty token file once let "" log in).

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_FOLDER_MODE = 0o700;

/** Writes `content` to a fresh temporary file in `file`'s folder, 0600 whatever the umask, synced. */
function stage(file: string, content: string): string {
  const temp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(temp, 'wx', PRIVATE_FILE_MODE);
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE);
    writeSync(fd, content);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(temp, { force: true });
    throw err;
  }
  closeSync(fd);
  return temp;
}

/** The rename (or link) itself is durable only once the folder's entry is on disk. */
function syncFolder(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Some platforms and file systems cannot sync a folder; the file itself is synced.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Replaces `file` (or creates it) atomically with `content`, mode 0600. */
export function writeSecretFile(file: string, content: string): void {
  const temp = stage(file, content);
  try {
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
  syncFolder(dirname(file));
}

/**
 * Creates `file` atomically with `content`, mode 0600, only when there is none: false when
 * another process made it first (two relays starting on one folder never overwrite each
 * other's keys).
 */
export function createSecretFile(file: string, content: string): boolean {
  const temp = stage(file, content);
  try {
    // link() fails when the name exists, so the check and the creation are one step.
    linkSync(temp, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    // A file system without hard links: a rename, checked just before.
    if ((code === 'EPERM' || code === 'ENOTSUP' || code === 'ENOSYS') && !existsSync(file)) {
      renameSync(temp, file);
      return true;
    }
    throw err;
  } finally {
    rmSync(temp, { force: true });
    syncFolder(dirname(file));
  }
}

/**
 * Makes `dir` (and any missing parent) and leaves it readable by its owner only: 0700.
 * Returns the mode it had when group or others could reach it (to say it was tightened).
 */
export function privateFolder(dir: string): number | undefined {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_FOLDER_MODE });
  const mode = statSync(dir).mode & 0o777;
  if (mode === PRIVATE_FOLDER_MODE) return undefined;
  chmodSync(dir, PRIVATE_FOLDER_MODE);
  return mode & 0o077 ? mode : undefined;
}

/** Leaves an existing file readable by its owner only (a database, its -wal and -shm). */
export function privateFileIfExists(file: string): void {
  try {
    chmodSync(file, PRIVATE_FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
