import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, constants, existsSync, openSync, writeSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { diesWithTest } from '../support/child-guard.js';
import { serveOnce } from '../support/cli.js';
import { waitUntil } from '../support/wait-until.js';

// `askrelay serve` as a child process on its own temporary data folder: what it refuses to
// start with (a short token, from the variable or the file) and what it repairs and says
// (an empty token file, a data folder other users can read).

const BIN = fileURLToPath(new URL('../../bin/askrelay.js', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'askrelay-cli-serve-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `askrelay serve` until it refuses or has started (then stops it). */
const serve = (data: string, env: Record<string, string> = {}) => serveOnce(data, { cwd: scratch, env });

/** Starts `askrelay serve` and leaves it running once it printed its last start-up line. */
async function running(data: string): Promise<{ child: ChildProcess; exited: Promise<unknown>; stdout: () => string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ASKRELAY_')));
  const [command, args] = diesWithTest(process.execPath, [BIN, 'serve', '--port', '0', '--data', data]);
  const child = spawn(command, args, { cwd: scratch, env: clean });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((r) => child.on('exit', r));
  let gone = false;
  void exited.then(() => (gone = true));
  await waitUntil(() => {
    if (gone) throw new Error(`serve exited before it was running:\n${stdout}${stderr}`);
    return stdout.includes('press Ctrl+C to stop');
  }, 'serve to be running');
  return { child, exited, stdout: () => stdout };
}

let n = 0;
const folder = () => join(scratch, `data-${++n}`);
const mode = (path: string) => statSync(path).mode & 0o777;

describe('askrelay serve refuses a short token', { timeout: 30_000 }, () => {
  it('ASKRELAY_TOKEN shorter than 24 characters: exit 1, the variable named', async () => {
    const run = await serve(folder(), { ASKRELAY_TOKEN: 'abc' });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^askrelay serve: ASKRELAY_TOKEN is 3 characters long; the relay needs a token of at least 24 characters\./);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('a token file with a short token: exit 1, the file named, the file left as it was', async () => {
    const data = folder();
    mkdirSync(data, { mode: 0o700 });
    writeFileSync(join(data, 'token'), 'short\n', { mode: 0o600 });
    const run = await serve(data);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`askrelay serve: the token in ${join(data, 'token')} is 5 characters long; the relay needs a token of at least 24 characters.`);
    expect(readFileSync(join(data, 'token'), 'utf8')).toBe('short\n');
  });

  it('a token of exactly 24 characters is enough', async () => {
    const run = await serve(folder(), { ASKRELAY_TOKEN: 'x'.repeat(24) });
    expect(run.code).toBeNull();
    expect(run.stdout).toContain(`Token: ${'x'.repeat(24)}\n`);
  });
});

describe('askrelay serve repairs and says so', { timeout: 30_000 }, () => {
  it.each([
    ['empty', ''],
    ['whitespace-only', ' \n\n'],
  ])('an %s token file is replaced by a new token', async (_name, content) => {
    const data = folder();
    mkdirSync(data, { mode: 0o700 });
    const file = join(data, 'token');
    writeFileSync(file, content, { mode: 0o600 });
    const run = await serve(data);
    expect(run.code).toBeNull();
    const token = readFileSync(file, 'utf8').trim();
    expect(token.length).toBeGreaterThanOrEqual(24);
    expect(run.stdout).toContain(`Token: ${token}\n`);
    expect(run.stdout).toContain(`The token file ${file} was empty; a new token was written to it.\n`);
    expect(mode(file)).toBe(0o600);
  });

  it('a data folder other users can read is made private (0700), with a line saying so', async () => {
    const data = folder();
    mkdirSync(data);
    chmodSync(data, 0o755);
    const run = await serve(data);
    expect(run.code).toBeNull();
    expect(run.stdout).toContain(`The data folder ${data} was open to other users (mode 0755); it is now 0700.\n`);
    expect(mode(data)).toBe(0o700);

    // Started again, there is nothing to say.
    const again = await serve(data);
    expect(again.stdout).not.toContain('open to other users');
  });
});

describe('askrelay serve keeps one relay to a data folder', { timeout: 30_000 }, () => {
  it('a second relay on a folder in use: exit 1, the first one named; after a SIGKILL the folder can be used again', async () => {
    const data = folder();
    const first = await running(data);
    try {
      const second = await serve(data);
      expect(second.code).toBe(1);
      expect(second.stdout).toBe('');
      expect(second.stderr).toMatch(
        new RegExp(`^askrelay serve: Another askrelay \\(pid ${first.child.pid}, started \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\) is running on the data folder ${data}; stop it first, or give this one another --data\\.\n$`),
      );
    } finally {
      first.child.kill('SIGKILL');
      await first.exited;
    }
    // Killed, the first relay left its holder file behind: no obstacle, and the next start says so.
    const again = await serve(data);
    expect(again.code).toBeNull();
    expect(again.stdout).toContain(`Replaced the lock of a relay that stopped without cleaning up (pid ${first.child.pid}).\n`);
    // Stopped cleanly (SIGTERM), it leaves no holder file.
    const lock = join(data, 'askrelay.lock');
    expect(existsSync(lock), existsSync(lock) ? `${readFileSync(lock, 'utf8')}\n${again.stdout}${again.stderr}` : '').toBe(false);
  });

  it('npm start killed with its whole process group, then started again at once: running on the first try, every time', async () => {
    const data = folder();
    for (let round = 0; round < 3; round++) {
      const started = await npmStart(data);
      expect(started.stdout()).toContain('askrelay is running: ');
      process.kill(-started.npm.pid!, 'SIGKILL');
      await started.exited;
    }
    const last = await npmStart(data);
    expect(last.stdout()).toContain('Replaced the lock of a relay that stopped without cleaning up');
    process.kill(last.npm.pid!, 'SIGTERM');
    await last.exited;
  });

  it('npm start stopped by its own pid (a supervisor\'s SIGTERM) stops the relay with it; a killed npm too', async () => {
    const data = folder();
    const first = await npmStart(data);
    const relayPid = Number(/"node":"[^"]*:pid(\d+)"/.exec(first.stdout())?.[1]);
    expect(relayPid).toBeGreaterThan(0);
    process.kill(first.npm.pid!, 'SIGTERM');
    await first.exited;
    await waitUntil(() => !alive(relayPid), 'the relay to stop with npm', 10_000);
    expect(first.stdout()).toContain('"event":"relay.stopping"');
    expect(existsSync(join(data, 'askrelay.lock'))).toBe(false);

    const second = await npmStart(data);
    const secondPid = Number(/"node":"[^"]*:pid(\d+)"/.exec(second.stdout())?.[1]);
    process.kill(second.npm.pid!, 'SIGKILL');
    await second.exited;
    await waitUntil(() => !alive(secondPid), 'the relay to notice npm is gone', 10_000);
    expect(second.stdout()).toContain('"event":"relay.stopping"');
  });

  it('a SIGTERM while the relay starts stops it cleanly once started: exit 0, its lock let go', async () => {
    const data = folder();
    // The start reads its routes from a FIFO, so it waits there, holding the folder, until
    // the test writes them: the signal lands mid-start every time.
    const routes = join(scratch, `routes-${n}.fifo`);
    execFileSync('mkfifo', [routes]);
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ASKRELAY_')));
    const [command, args] = diesWithTest(process.execPath, [BIN, 'serve', '--port', '0', '--data', data]);
    const child = spawn(command, args, { cwd: scratch, env: { ...clean, ASKRELAY_ROUTES: routes } });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    const exited = new Promise<[number | null, string | null]>((r) => child.on('exit', (code, signal) => r([code, signal])));
    await waitUntil(() => existsSync(join(data, 'askrelay.lock')), 'the start to take the folder', 20_000);
    child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 100));
    try {
      // Not blocking: a relay the signal killed reads no more, and the exit below says so.
      const fd = openSync(routes, constants.O_WRONLY | constants.O_NONBLOCK);
      writeSync(fd, '[]');
      closeSync(fd);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err;
    }
    // Not killed by the signal (Node's default action): the relay closed what it held, then exited.
    expect(await exited).toEqual([0, null]);
    expect(stdout).toContain('"event":"relay.stopping"');
    expect(existsSync(join(data, 'askrelay.lock'))).toBe(false);
    const again = await serve(data);
    expect(again.code).toBeNull();
    expect(again.stdout).not.toContain('Replaced the lock');
  });
});

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** `npm start` as an operator types it, in a process group of its own, once the relay runs. */
async function npmStart(data: string): Promise<{ npm: ChildProcess; exited: Promise<unknown>; stdout: () => string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ASKRELAY_') && !k.startsWith('npm_')));
  const npm = spawn('npm', ['start'], { cwd: ROOT, env: { ...clean, ASKRELAY_DATA: data, ASKRELAY_PORT: '0' }, detached: true });
  let stdout = '';
  let stderr = '';
  npm.stdout!.on('data', (d) => (stdout += d));
  npm.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise((r) => npm.on('exit', r));
  let gone = false;
  void exited.then(() => (gone = true));
  try {
    await waitUntil(() => {
      if (gone) throw new Error(`npm start exited before the relay ran:\n${stdout}${stderr}`);
      return stdout.includes('press Ctrl+C to stop');
    }, 'npm start to run the relay', 20_000);
  } catch (err) {
    process.kill(-npm.pid!, 'SIGKILL');
    throw err;
  }
  return { npm, exited, stdout: () => stdout };
}
