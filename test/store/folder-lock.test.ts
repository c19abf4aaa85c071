import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LOCK_FILE, lockDataFolder } from '../../src/store/folder-lock.js';

// The lock that keeps a second relay off a data folder: taken fresh, refused while the
// process it names runs (another process, or another relay of this one), replaced when
// that process is gone or the file cannot be read.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'askrelay-lock-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const lockFile = () => join(dir, LOCK_FILE);

/** A pid that was alive a moment ago and is gone now: a child that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((r) => child.on('exit', r));
  return child.pid!;
}

describe('the data folder lock', () => {
  it('a fresh folder: the lock is made (0600, naming this process) and removed on release', () => {
    const lock = lockDataFolder(dir);
    expect(lock.notice).toBeUndefined();
    const facts = JSON.parse(readFileSync(lockFile(), 'utf8'));
    expect(facts).toMatchObject({ pid: process.pid, host: hostname() });
    expect(new Date(facts.startedAt).toISOString()).toBe(facts.startedAt);
    expect(statSync(lockFile()).mode & 0o777).toBe(0o600);
    lock.release();
    expect(existsSync(lockFile())).toBe(false);
    // Released: the same process may lock the folder again (a relay restarted in place).
    lockDataFolder(dir).release();
  });

  it('held by another live process on this host: refused with the sentence, the lock left alone', async () => {
    const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)']);
    try {
      const content = JSON.stringify({ pid: other.pid, host: hostname(), startedAt: '2026-01-02T03:04:05.000Z' });
      writeFileSync(lockFile(), content);
      expect(() => lockDataFolder(dir)).toThrow(
        `Another askrelay (pid ${other.pid}, started 2026-01-02T03:04:05.000Z) is running on the data folder ${dir}; stop it first, or give this one another --data.`,
      );
      expect(readFileSync(lockFile(), 'utf8')).toBe(content);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('held by a relay of this same process: refused until that one releases it', () => {
    const first = lockDataFolder(dir);
    const { startedAt } = JSON.parse(readFileSync(lockFile(), 'utf8'));
    expect(() => lockDataFolder(dir)).toThrow(`Another askrelay (pid ${process.pid}, started ${startedAt}) is running on the data folder ${dir}`);
    first.release();
    lockDataFolder(dir).release();
  });

  it('left by a process that is gone: replaced, with a notice naming its pid', async () => {
    const pid = await deadPid();
    writeFileSync(lockFile(), JSON.stringify({ pid, host: hostname(), startedAt: '2026-01-02T03:04:05.000Z' }));
    const lock = lockDataFolder(dir);
    expect(lock.notice).toBe(`Replaced the lock of a relay that stopped without cleaning up (pid ${pid}).`);
    expect(JSON.parse(readFileSync(lockFile(), 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('naming this pid though no relay of this process holds it (a restarted container): replaced', () => {
    writeFileSync(lockFile(), JSON.stringify({ pid: process.pid, host: hostname(), startedAt: '2026-01-02T03:04:05.000Z' }));
    const lock = lockDataFolder(dir);
    expect(lock.notice).toBe(`Replaced the lock of a relay that stopped without cleaning up (pid ${process.pid}).`);
    lock.release();
  });

  it.each([
    ['empty', ''],
    ['not JSON', 'pid 12'],
    ['missing its pid', JSON.stringify({ host: hostname(), startedAt: 'x' })],
  ])('a lock file that is %s: replaced, with a notice', (_, content) => {
    writeFileSync(lockFile(), content);
    const lock = lockDataFolder(dir);
    expect(lock.notice).toBe(`Replaced the lock file ${lockFile()}, which could not be read.`);
    expect(JSON.parse(readFileSync(lockFile(), 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('held on another host: refused, the host named, whatever the pid', async () => {
    const pid = await deadPid();
    writeFileSync(lockFile(), JSON.stringify({ pid, host: 'elsewhere.example', startedAt: '2026-01-02T03:04:05.000Z' }));
    expect(() => lockDataFolder(dir)).toThrow(`Another askrelay (pid ${pid} on host elsewhere.example, started 2026-01-02T03:04:05.000Z) is running on the data folder ${dir}`);
  });

  it('release leaves a lock another relay has since taken over', async () => {
    const lock = lockDataFolder(dir);
    const other = JSON.stringify({ pid: await deadPid(), host: hostname(), startedAt: '2026-01-02T03:04:05.000Z' });
    writeFileSync(lockFile(), other);
    lock.release();
    expect(readFileSync(lockFile(), 'utf8')).toBe(other);
  });
});
