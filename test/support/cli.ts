import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { diesWithTest } from './child-guard.js';

const BIN = fileURLToPath(new URL('../../bin/askrelay.js', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The test's environment without its ASKRELAY_* variables. */
const cleanEnv = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ASKRELAY_')));

/** Runs the real askrelay command as a child process, with no ASKRELAY_* from the test's own environment. */
export function runCli(args: string[], env: Record<string, string | undefined>, cwd: string): Promise<CliRun> {
  return startCli(args, env, cwd).done;
}

/** runCli, with what the command has written to stderr so far readable while it runs. */
export function startCli(args: string[], env: Record<string, string | undefined>, cwd: string): { done: Promise<CliRun>; stderr(): string } {
  const clean = cleanEnv();
  let stderr = '';
  const done = new Promise<CliRun>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...clean, ...env } });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { done, stderr: () => stderr };
}

/** A loopback port that was free a moment ago: where a CLI test finds no relay listening. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

export interface ServeOptions {
  cwd: string;
  env?: Record<string, string>;
  /** Run as this user (and group) id: how a test as root meets file modes. */
  as?: number;
}

/**
 * Runs `askrelay serve --port 0 --data <data>` and settles once it exits on its own
 * (`code` is its exit code) or prints its last start-up line (`code` is null: it was
 * running, and is then stopped with SIGTERM).
 */
export function serveOnce(data: string, options: ServeOptions): Promise<CliRun> {
  const [command, args] = diesWithTest(process.execPath, [BIN, 'serve', '--port', '0', '--data', data]);
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...cleanEnv(), ...options.env },
    ...(options.as !== undefined ? { uid: options.as, gid: options.as } : {}),
  });
  let stdout = '';
  let stderr = '';
  let running = false;
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      stdout += d;
      if (!running && stdout.includes('press Ctrl+C to stop')) {
        running = true;
        child.kill('SIGTERM');
      }
    });
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: running ? null : code, stdout, stderr }));
  });
}
