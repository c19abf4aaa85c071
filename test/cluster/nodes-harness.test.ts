import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { startLoadBalancer, type LoadBalancer } from '../support/load-balancer.js';
import { testPool } from '../support/postgres.js';
import { apiAt, NODES_TOKEN, startNodes, type RelayNodes } from '../support/relay-nodes.js';
import { waitUntil } from '../support/wait-until.js';

// The harness the cross-node tests stand on: real `askrelay serve` processes started at once
// on one fresh PostgreSQL database, and a real HAProxy in front of them. What it proves here
// is only what holds already with a shared store; the cross-node behaviour has its own tests.

let cluster: RelayNodes;
let lb: LoadBalancer;

beforeAll(async () => {
  cluster = await startNodes(2, { lease: '1500ms' });
  lb = await startLoadBalancer(cluster.nodes.map((n) => n.url));
}, 180_000);

afterAll(async () => {
  await lb?.stop();
  await cluster?.stop();
});

const question = (text: string) => ({ questions: [{ text, options: ['Yes', 'No'] }], waitSeconds: 600 });

async function created(res: Response): Promise<Card> {
  expect(res.status, cluster.describe()).toBe(201);
  return (await res.json()) as Card;
}

async function mcpThroughBalancer() {
  const client = new Client({ name: 'harness-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', lb.url), { requestInit: { headers: { authorization: `Bearer ${NODES_TOKEN}` } } });
  await client.connect(transport);
  return { client, transport };
}

async function health(base: string): Promise<number> {
  const res = await fetch(new URL('/api/health', base));
  await res.body?.cancel();
  return res.status;
}

describe('relay nodes on one PostgreSQL database behind HAProxy', { timeout: 120_000 }, () => {
  it('starts two nodes at once, each healthy with the shared token, the schema migrated once', async () => {
    expect(cluster.nodes.map((n) => n.id)).toEqual(['node-0', 'node-1']);
    expect(new Set(cluster.nodes.map((n) => n.pid)).size).toBe(2);
    expect(cluster.nodes[0].port).not.toBe(cluster.nodes[1].port);
    for (const node of cluster.nodes) {
      expect(node.alive()).toBe(true);
      expect(await health(node.url)).toBe(200);
      expect(node.stdout()).toContain(`Token: ${NODES_TOKEN}`);
    }
    const pool = testPool(cluster.db.url);
    try {
      const { rows } = await pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await pool.end();
    }
  });

  it('shows a card created through node 0 on node 1', async () => {
    const card = await created(await cluster.api(0, '/api/cards', { method: 'POST', json: question('Made on node 0?') }));
    const res = await cluster.api(1, `/api/cards/${card.id}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: card.id, status: 'pending', questions: [{ text: 'Made on node 0?' }] });
  });

  it('takes a card through the load balancer that every node then shows', async () => {
    const card = await created(await apiAt(lb.url, '/api/cards', { method: 'POST', json: question('Through HAProxy?') }));
    for (const i of [0, 1]) {
      expect(((await (await cluster.api(i, `/api/cards/${card.id}`)).json()) as Card).questions[0].text).toBe('Through HAProxy?');
    }
    const back = await apiAt(lb.url, `/api/cards/${card.id}`);
    expect(back.status).toBe(200);
    expect(await lb.backends()).toEqual([
      { name: 'node-0', status: 'UP' },
      { name: 'node-1', status: 'UP' },
    ]);
  });

  it('keeps an MCP client on the node that holds its session', async () => {
    const { client, transport } = await mcpThroughBalancer();
    try {
      // Round robin would send every other request to the node that never saw the session (404).
      for (let i = 0; i < 4; i++) expect((await client.listTools()).tools.map((t) => t.name)).toContain('ask_user');
      expect(['node-0', 'node-1']).toContain((await lb.mcpSessions()).get(transport.sessionId!));
    } finally {
      await client.close();
    }
  });

  it('keeps answering through the other node when one is killed, and takes the node back when it returns', async () => {
    const before = await created(await apiAt(lb.url, '/api/cards', { method: 'POST', json: question('Before the kill?') }));
    const { client, transport } = await mcpThroughBalancer();
    await client.listTools();
    const sessionId = transport.sessionId!;
    // The node that holds the MCP session is the one to die.
    const victim = Number((await lb.mcpSessions()).get(sessionId)!.slice('node-'.length));
    const other = 1 - victim;
    const killed = cluster.nodes[victim].pid;
    const exit = await cluster.kill(victim);
    expect(exit.signal).toBe('SIGKILL');
    expect(cluster.nodes[victim].alive()).toBe(false);

    // Before HAProxy's checks notice, a refused connection is sent to the other node at once.
    for (let i = 0; i < 6; i++) expect(await health(lb.url), lb.output()).toBe(200);
    // So is the MCP session's next request: the other node does not know the session, and
    // says so (404, start a new session) instead of the client hanging or getting a 503.
    const lost = await fetch(new URL('/mcp', lb.url), {
      method: 'POST',
      headers: { authorization: `Bearer ${NODES_TOKEN}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sessionId },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
    });
    expect(lost.status, await lost.text()).toBe(404);
    await client.close().catch(() => {});

    // Its checks (every 500 ms, two failures) take the node out; how soon is not this test's
    // business (a loaded machine delays HAProxy too), only that the other node stays in.
    await waitUntil(async () => (await lb.backends())[victim].status.startsWith('DOWN'), `HAProxy to take node-${victim} out`);
    expect((await lb.backends())[other].status).toBe('UP');
    for (let i = 0; i < 4; i++) expect(await health(lb.url)).toBe(200);
    const res = await apiAt(lb.url, `/api/cards/${before.id}`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as Card).status).toBe('pending');

    // Same name, data folder and port: the balancer's next good check brings it back.
    const again = await cluster.restart(victim);
    expect(again.url).toBe(cluster.url(victim));
    expect(again.pid).not.toBe(killed);
    await waitUntil(async () => (await lb.backends())[victim].status === 'UP', `HAProxy to take node-${victim} back`);
    expect((await (await cluster.api(victim, `/api/cards/${before.id}`)).json()) as Card).toMatchObject({ id: before.id, status: 'pending' });
  });
});
