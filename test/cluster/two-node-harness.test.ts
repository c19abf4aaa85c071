import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { dropDatabase, TEST_DATABASE_URL } from '../support/postgres.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { DATABASE_URL_FILE, startTwoNodes } from '../support/two-node-relay.js';

// The two-node mode of startTestRelay (ASKRELAY_TEST_NODES=2, npm run test:two-nodes) is only
// worth what its routing and its database handling are: checked here in the normal run.

// With a database given, startTestRelay starts the one node it is asked for.
const startOne = (env: Record<string, string>, dir: string | undefined, port: string, extra: object) => startTestRelay(env, dir, port, extra);
const started: TestRelay[] = [];
afterEach(async () => {
  for (const relay of started.splice(0)) await relay.stop();
});

async function twoNodes(dir?: string, port = '0'): Promise<TestRelay> {
  const relay = await startTwoNodes(startOne, {}, dir, port, {});
  started.push(relay);
  return relay;
}

const nodeOf = async (res: Response) => ((await res.json()) as { node: string }).node;

async function databaseExists(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [new URL(url).pathname.slice(1)])).rowCount === 1;
  } finally {
    await client.end();
  }
}

it('api() alternates A and B, keeps MCP on A, and sends B the page origin as B sees it', async () => {
  const relay = await twoNodes();
  expect(relay.node).toBe('node-a');
  expect(relay.store).toBe('postgres');
  const nodes = [];
  for (let i = 0; i < 4; i++) nodes.push(await nodeOf(await relay.api('/api/health')));
  expect(nodes).toEqual(['node-a', 'node-b', 'node-a', 'node-b']);
  // A request of an MCP session goes to A and leaves the turn where it was.
  expect(await nodeOf(await relay.api('/api/health', { headers: { 'Mcp-Session-Id': 'x' } }))).toBe('node-a');
  const mcp = await relay.api('/mcp', { method: 'GET' });
  await mcp.body?.cancel();
  expect(await nodeOf(await relay.api('/api/health'))).toBe('node-a');
  // Logging in checks the Origin: both nodes take the page's (A's) as their own.
  const page = { 'content-type': 'application/json', origin: new URL(relay.url).origin };
  for (let i = 0; i < 2; i++) expect((await relay.api('/api/login', { method: 'POST', headers: page, body: JSON.stringify({ token: relay.token }) })).status).toBe(200);
});

it('a relay started again on its data folder gets its database back; a folder it made goes with its database', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'askrelay-two-node-'));
  try {
    const first = await twoNodes(dir);
    const url = readFileSync(join(dir, DATABASE_URL_FILE), 'utf8').trim();
    const card = (await (await first.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Kept?' }] } })).json()) as { id: string };
    const port = new URL(first.url).port;
    await first.stop();
    expect(await databaseExists(url)).toBe(true);
    const second = await twoNodes(dir, port);
    expect(second.url).toBe(first.url);
    for (let i = 0; i < 2; i++) expect((await second.api(`/api/cards/${card.id}`)).status).toBe(200);
    await second.stop();
    await dropDatabase(url);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const own = await twoNodes();
  const url = readFileSync(join(own.dataDir, DATABASE_URL_FILE), 'utf8').trim();
  await own.stop();
  expect(existsSync(own.dataDir)).toBe(false);
  expect(await databaseExists(url)).toBe(false);
});
