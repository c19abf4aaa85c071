import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodesTable } from '../../src/cli/nodes-command.js';
import type { Session } from '../../src/sessions/model.js';
import { startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { runCli } from '../support/cli.js';
import { freshDatabase, type FreshDatabase } from '../support/postgres.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { idleSession } from '../support/session-api.js';

// askrelay nodes and GET /api/nodes: an embedded relay is one node; two nodes on one
// PostgreSQL database list each other; only the human may read it.

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'askrelay-nodes-cli-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const TOKEN = 'test-token-0123456789abcdef';
const cli = (relay: TestRelay, args: string[]) => runCli(['nodes', ...args], { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: TOKEN }, scratch);

describe('the node list as a table', () => {
  it('one row per node, the answering one starred, sessions counted and work named', () => {
    const now = Date.parse('2026-12-01T12:00:10Z');
    const table = nodesTable(
      {
        node: 'node-b',
        store: 'postgres',
        nodes: [
          { id: 'node-a', url: 'http://10.0.0.1:7070/', startedAt: '2026-12-01T11:00:00Z', heartbeatAt: '2026-12-01T12:00:07Z', holds: { sessions: 2, mcpCalls: 1, streams: 4 }, leases: ['channels', 'push', 'session:s_1', 'session:s_2'] },
          { id: 'node-b', startedAt: '2026-12-01T11:30:00Z', heartbeatAt: '2026-12-01T12:00:10Z', holds: { sessions: 0, mcpCalls: 0, streams: 12 }, leases: [] },
        ],
      },
      now,
    );
    expect(table).toBe(
      [
        'NODE      HEARTBEAT  SESSIONS  MCP CALLS  STREAMS  HOLDS           URL',
        'node-a    3s ago     2         1          4        channels, push  http://10.0.0.1:7070/',
        'node-b *  0s ago     0         0          12       -               -',
        '2 nodes on postgres; * is the one that answered.',
      ].join('\n'),
    );
  });
});

describe('askrelay nodes', () => {
  it('an embedded relay lists itself; --json is GET /api/nodes; an agent token is refused', async () => {
    const fake: AnthropicServer = await startAnthropicServer({ model: () => ({ text: 'Done.' }) });
    const relay = await startTestRelay({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy' });
    try {
      const session: Session = await idleSession(relay, { prompt: 'hello' });
      const json = await cli(relay, ['--json']);
      expect(json.code).toBe(0);
      const list = JSON.parse(json.stdout) as { node: string; store: string; nodes: { id: string; leases: string[]; holds: Record<string, number> }[] };
      expect(list).toMatchObject({ node: relay.node, store: 'sqlite' });
      // The answering node counts what it holds now: the idle session's runner, no MCP call, no stream.
      expect(list.nodes[0].holds).toEqual({ sessions: 1, mcpCalls: 0, streams: 0, waits: 0 });
      expect(list.nodes.map((n) => n.id)).toEqual([relay.node]);
      expect(list.nodes[0].leases).toContain('push');
      const table = await cli(relay, []);
      expect(table.code).toBe(0);
      expect(table.stdout).toMatch(new RegExp(`^NODE +HEARTBEAT +SESSIONS +MCP CALLS +STREAMS +HOLDS +URL\\n${relay.node.replace(/[.]/g, '\\.')} \\* +\\d+s ago +`));
      expect(table.stdout).toContain('1 node on sqlite; * is the one that answered.');
      const agent = await relay.api('/api/nodes', { headers: { authorization: `Bearer ${relay.sessions.agentToken(session.id)}` } });
      expect(agent.status).toBe(403);
      expect(((await agent.json()) as { error: { code: string } }).error.code).toBe('human_only');
      expect((await fetch(new URL('/api/nodes', relay.url))).status).toBe(401);
      const stray = await cli(relay, ['extra']);
      expect(stray.code).toBe(1);
      expect(stray.stderr).toContain('unexpected argument "extra"');
    } finally {
      await relay.stop();
      await fake.close();
    }
  });

  it('two nodes on one database list each other, whichever is asked', async () => {
    const db: FreshDatabase = await freshDatabase();
    const start = (id: string) => startTestRelay({ ASKRELAY_NODE_ID: id, ASKRELAY_LEASE: '1500ms' }, undefined, '0', { databaseUrl: db.url });
    const [a, b] = await Promise.all([start('node-a'), start('node-b')]);
    try {
      for (const [relay, me] of [[a, 'node-a'], [b, 'node-b']] as const) {
        const run = await cli(relay, []);
        expect(run.code).toBe(0);
        expect(run.stdout).toMatch(/^node-a /m);
        expect(run.stdout).toMatch(/^node-b /m);
        expect(run.stdout).toContain(`${me} *`);
        expect(run.stdout).toContain('2 nodes on postgres');
      }
    } finally {
      await Promise.all([a.stop(), b.stop()]);
      await db.drop();
    }
  });
});
