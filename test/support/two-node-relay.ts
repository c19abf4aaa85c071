import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { ServeConfig } from '../../src/config.js';
import { freshDatabase, dropDatabase } from './postgres.js';
import type { TestRelay } from './running-relay.js';

// ASKRELAY_TEST_NODES=2: the feature suites run against two relay nodes on one PostgreSQL
// database, as behind a load balancer, so that "every feature works with two nodes" is
// checked by the tests that define the features. The relay a test gets is node A (its
// internals, its URL for MCP clients and the CLI); api() spreads the test's requests over
// A and B. Node A starts first, so the work with one owner (the push queue, the chat
// channels) is A's, where the test's idle() calls look for it.

export const TWO_NODES = process.env.ASKRELAY_TEST_NODES === '2';

/** Short, so that a stopped node's work moves within a test; long enough that a busy machine renews in time. */
const LEASE = '1500ms';
/** Where a data folder remembers its database, so that a relay restarted on the folder finds its cards again. */
export const DATABASE_URL_FILE = '.test-database-url';

type StartOne = (env: Record<string, string>, dataDir: string | undefined, port: string, extra: Partial<ServeConfig>) => Promise<TestRelay>;

/**
 * This run's prefix for database names: test/support/two-node-setup.ts drops what is left at
 * the end. Without it (the harness's own test in a normal run) the usual prefix; that test
 * lets startTwoNodes make its folders, so stop() drops its databases.
 */
const runPrefix = (): string | undefined => inject('twoNodeDatabasePrefix');

/** The folder's database, or a fresh one remembered in the folder. */
async function databaseFor(dir: string): Promise<{ url: string; drop(): Promise<void> }> {
  const file = join(dir, DATABASE_URL_FILE);
  if (existsSync(file)) {
    const url = readFileSync(file, 'utf8').trim();
    return { url, drop: () => dropDatabase(url) };
  }
  const db = await freshDatabase(runPrefix());
  writeFileSync(file, `${db.url}\n`, { mode: 0o600 });
  return db;
}

/** MCP sessions live on the node that opened them: a load balancer keeps such requests on one node. */
function sticky(base: string, path: string, init: RequestInit | undefined): boolean {
  if (new URL(path, base).pathname.startsWith('/mcp')) return true;
  return new Headers(init?.headers as HeadersInit | undefined).has('mcp-session-id');
}

/**
 * Behind a load balancer every node sees the same Host, so the page's Origin is each node's
 * own; here A and B listen on different ports, so a request sent to B says B's origin where
 * the test said A's.
 */
function asSeenBy(b: TestRelay, a: TestRelay, init: RequestInit | undefined): RequestInit | undefined {
  const headers = new Headers(init?.headers as HeadersInit | undefined);
  if (headers.get('origin') !== new URL(a.url).origin) return init;
  headers.set('origin', new URL(b.url).origin);
  return { ...init, headers: Object.fromEntries(headers) };
}

export async function startTwoNodes(startOne: StartOne, env: Record<string, string>, dataDir: string | undefined, port: string, extra: Partial<ServeConfig>): Promise<TestRelay> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'askrelay-test-'));
  // A folder the test names may not exist yet; the file naming its database goes in it.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const db = await databaseFor(dir);
  const nodeEnv = (id: string) => ({ ASKRELAY_LEASE: LEASE, ...env, ASKRELAY_NODE_ID: id });
  const withDb = { ...extra, databaseUrl: db.url };
  // A start that fails (a test of a refused setting) leaves nothing of a folder made here.
  const forget = async (err: unknown): Promise<never> => {
    if (!dataDir) {
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    }
    throw err;
  };
  // A holds what has one owner when B comes; B has its own data folder, the same on a
  // restart, so a session's state on B's disk is found again.
  const a = await startOne(nodeEnv('node-a'), dir, port, withDb).catch((err: unknown) => forget(err));
  const b = await startOne(nodeEnv('node-b'), join(dir, 'node-b'), '0', withDb).catch(async (err: unknown) => {
    await a.close();
    return forget(err);
  });
  let turn = 0;
  const close = async () => {
    await Promise.all([a.close(), b.close()]);
  };
  return {
    ...a,
    dataDir: dir,
    api(path, init) {
      if (sticky(a.url, path, init) || turn++ % 2 === 0) return a.api(path, init);
      return b.api(path, asSeenBy(b, a, init));
    },
    close,
    async stop() {
      await close();
      // A folder the test gave may be started on again; its database goes at the end of the run.
      if (dataDir) return;
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
