import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { folderLockState, LOCK_DB_FILE, LOCK_FILE, lockDataFolder } from '../../src/store/folder-lock.js';
import { diesWithTest } from '../support/child-guard.js';
import { waitUntil } from '../support/wait-until.js';

// The lock that keeps a second relay off a data folder is the kernel's (SQLite's write lock
// on askrelay.lock.db): refused while another process or another relay of this one holds it,
// free the moment the holder dies, however it died and whatever file it left behind.

let dir: string;
const children: ChildProcess[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'askrelay-lock-'));
});
afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const factsFile = () => join(dir, LOCK_FILE);
const HOLDER = join(import.meta.dirname, '../support/lock-holder.ts');

/** Spawns `sh -c script`, where $HOLDER starts a process holding the lock; resolves with the holder's pid once it holds it. */
async function holder(script = 'exec node --import tsx "$HOLDER" "$DIR"', as?: number): Promise<{ pid: number; sh: ChildProcess }> {
  const [cmd, args] = diesWithTest('/bin/sh', ['-c', script]);
  const sh = spawn(cmd, args, { env: { ...process.env, HOLDER, DIR: dir }, stdio: ['ignore', 'pipe', 'inherit'], ...(as === undefined ? {} : { uid: as, gid: as }) });
  children.push(sh);
  let out = '';
  sh.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const pid = await waitUntil(() => /locked (\d+)/.exec(out)?.[1], 'the holder to take the lock', 20_000);
  return { pid: Number(pid), sh };
}

/** Whether `pid` is a zombie: dead, holding nothing, not yet reaped by its parent. */
const zombie = (pid: number) => {
  try {
    return /^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

describe('the data folder lock', () => {
  it('a fresh folder: taken (the lock database and the holder file 0600, naming this process), let go on release', () => {
    const lock = lockDataFolder(dir);
    expect(lock.notice).toBeUndefined();
    const facts = JSON.parse(readFileSync(factsFile(), 'utf8'));
    expect(facts).toMatchObject({ pid: process.pid, host: hostname() });
    expect(new Date(facts.startedAt).toISOString()).toBe(facts.startedAt);
    expect(statSync(factsFile()).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, LOCK_DB_FILE)).mode & 0o777).toBe(0o600);
    expect(folderLockState(dir)).toEqual({ state: 'held', holder: facts });
    lock.release();
    lock.release();
    expect(existsSync(factsFile())).toBe(false);
    expect(folderLockState(dir)).toEqual({ state: 'free' });
    // Released: the same process may lock the folder again (a relay restarted in place).
    lockDataFolder(dir).release();
  });

  it('held by a relay of this same process: refused until that one releases it', () => {
    const first = lockDataFolder(dir);
    const { startedAt } = JSON.parse(readFileSync(factsFile(), 'utf8'));
    expect(() => lockDataFolder(dir)).toThrow(`Another askrelay (pid ${process.pid}, started ${startedAt}) is running on the data folder ${dir}; stop it first, or give this one another --data.`);
    first.release();
    lockDataFolder(dir).release();
  });

  it('held by another process: refused with the sentence naming it, its file left alone; free the moment it is SIGKILLed', async () => {
    const { pid, sh } = await holder();
    const content = readFileSync(factsFile(), 'utf8');
    const { startedAt } = JSON.parse(content);
    expect(() => lockDataFolder(dir)).toThrow(`Another askrelay (pid ${pid}, started ${startedAt}) is running on the data folder ${dir}; stop it first, or give this one another --data.`);
    expect(readFileSync(factsFile(), 'utf8')).toBe(content);
    expect(folderLockState(dir)).toMatchObject({ state: 'held', holder: { pid } });

    const exited = new Promise((r) => sh.once('exit', r));
    process.kill(pid, 'SIGKILL');
    await exited;
    const lock = lockDataFolder(dir);
    expect(lock.notice).toBe(`Replaced the lock of a relay that stopped without cleaning up (pid ${pid}).`);
    expect(JSON.parse(readFileSync(factsFile(), 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('a holder killed but not yet reaped (a zombie, as a supervisor sees one for a moment): the folder is free at once', async () => {
    // The holder runs in the background of a shell that then becomes `sleep`, which never reaps it.
    const { pid } = await holder('node --import tsx "$HOLDER" "$DIR" & exec sleep 60');
    process.kill(pid, 'SIGKILL');
    await waitUntil(() => zombie(pid), 'the killed holder to be a zombie', 10_000);
    const lock = lockDataFolder(dir);
    expect(lock.notice).toBe(`Replaced the lock of a relay that stopped without cleaning up (pid ${pid}).`);
    lock.release();
  });

  it('a holder stopped with SIGTERM lets go of the folder and removes its file', async () => {
    const { pid, sh } = await holder();
    const exited = new Promise((r) => sh.once('exit', r));
    process.kill(pid, 'SIGTERM');
    await exited;
    expect(existsSync(factsFile())).toBe(false);
    const lock = lockDataFolder(dir);
    expect(lock.notice).toBeUndefined();
    lock.release();
  });

  it.each([
    ['a live process on this host (pid 1, a pid reused after a reboot)', { pid: 1, host: hostname() }, `(pid 1)`],
    ['this very pid (a container whose relay was pid 1 too)', { pid: process.pid, host: hostname() }, `(pid ${process.pid})`],
    ['another host (a container recreated with a new hostname on the same volume)', { pid: 7, host: 'elsewhere.example' }, '(pid 7 on host elsewhere.example)'],
  ])('a holder file left naming %s is no obstacle', (_, facts, named) => {
    writeFileSync(factsFile(), JSON.stringify({ ...facts, startedAt: '2026-01-02T03:04:05.000Z' }));
    const lock = lockDataFolder(dir);
    expect(lock.notice).toBe(`Replaced the lock of a relay that stopped without cleaning up ${named}.`);
    expect(JSON.parse(readFileSync(factsFile(), 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it.each([
    ['empty', ''],
    ['not JSON', 'pid 12'],
    ['missing its pid', JSON.stringify({ host: hostname(), startedAt: 'x' })],
  ])('a holder file that is %s: no obstacle, replaced', (_, content) => {
    writeFileSync(factsFile(), content);
    const lock = lockDataFolder(dir);
    expect(lock.notice).toBeUndefined();
    expect(JSON.parse(readFileSync(factsFile(), 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('held by a process whose holder file is gone: refused all the same, without a name', async () => {
    await holder();
    rmSync(factsFile());
    expect(() => lockDataFolder(dir)).toThrow(`Another askrelay is running on the data folder ${dir}; stop it first, or give this one another --data.`);
    expect(folderLockState(dir)).toEqual({ state: 'held' });
  });

  it('held by a relay running as a user who is not root: refused for root too, free once it is killed', async () => {
    const NOBODY = 65534;
    chownSync(dir, NOBODY, NOBODY);
    const { pid, sh } = await holder(undefined, NOBODY);
    expect(statSync(join(dir, LOCK_DB_FILE)).uid).toBe(NOBODY);
    expect(() => lockDataFolder(dir)).toThrow(`Another askrelay (pid ${pid}, started `);
    const exited = new Promise((r) => sh.once('exit', r));
    process.kill(pid, 'SIGKILL');
    await exited;
    lockDataFolder(dir).release();
  });

  it('a folder on a read-only mount cannot be locked: the start goes on with a notice, and the probe says so', () => {
    lockDataFolder(dir).release(); // an earlier relay left its lock database
    execFileSync('mount', ['--bind', dir, dir]);
    try {
      execFileSync('mount', ['-o', 'remount,ro,bind', dir]);
      const lock = lockDataFolder(dir);
      expect(lock.notice).toBe(`The data folder ${dir} could not be locked (EROFS: read-only file system, access '${join(dir, LOCK_DB_FILE)}'): nothing keeps a second relay off it while this one runs.`);
      lock.release();
      expect(folderLockState(dir)).toEqual({ state: 'unlockable', reason: `EROFS: read-only file system, access '${join(dir, LOCK_DB_FILE)}'` });
    } finally {
      execFileSync('umount', [dir]);
    }
  });

  it('a folder that has never held a relay: free, and the probe makes no file', () => {
    expect(folderLockState(dir)).toEqual({ state: 'free' });
    expect(existsSync(join(dir, LOCK_DB_FILE))).toBe(false);
  });
});
