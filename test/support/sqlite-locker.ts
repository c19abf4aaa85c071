import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { diesWithTest } from './child-guard.js';

// Another program holding a SQLite file's write lock, as an sqlite3 shell left inside a
// transaction does: a separate process (locks are per process, and the relay's own
// connection would share them) that runs BEGIN EXCLUSIVE and holds it until released.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const HOLDER = `
const Database = require('better-sqlite3');
const db = new Database(process.argv[1]);
db.pragma('busy_timeout = 5000');
db.exec('BEGIN EXCLUSIVE');
process.stdout.write('locked\\n');
process.stdin.once('data', () => {
  db.exec('COMMIT');
  db.close();
  process.stdout.write('released\\n');
  process.exit(0);
});
`;

export interface SqliteLock {
  /** Commits (writing nothing) and lets go; resolves once the holder has exited. */
  release(): Promise<void>;
}

/** Resolves once another process holds `file`'s write lock. */
export async function lockSqliteFile(file: string): Promise<SqliteLock> {
  const [command, args] = diesWithTest(process.execPath, ['-e', HOLDER, file]);
  const child = spawn(command, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('locked\n')) resolve();
    });
    void exited.then((code) => reject(new Error(`the lock holder exited (${code}) before it held the lock: ${err}`)));
  });
  return {
    async release() {
      if (child.exitCode === null) child.stdin.end('release\n');
      const code = await exited;
      if (code !== 0) throw new Error(`the lock holder failed (${code}): ${err}`);
    },
  };
}
