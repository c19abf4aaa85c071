import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { lastToolResult, lastUserText, startAnthropicServer, type AnthropicServer, type MessagesRequest, type ScriptedReply } from '../fakes/anthropic-server.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram-api.js';
import { dbQuestion } from '../providers/claude-fixtures.js';
import { startLoadBalancer, type LoadBalancer } from '../support/load-balancer.js';
import { apiAt, NODES_TOKEN, startNodes, type RelayNodes } from '../support/relay-nodes.js';
import { waitUntil } from '../support/wait-until.js';

// A node dies (SIGKILL) while it holds everything a node can hold: 100 pending cards it made,
// an agent session (Claude `messages`) waiting on a card, the chat channel (Telegram: polling
// and posting), the push queue, and an MCP call from `askrelay mcp` that reached it through
// HAProxy. The other node takes all of it over once the lease runs out; the session's card
// answered there reaches the model, the MCP call (re-sent by the bridge through HAProxy)
// re-attaches to its card and returns the answer, the chat channel posts and takes answers
// again, and nothing is lost or answered twice.

const BIN = fileURLToPath(new URL('../../bin/askrelay.js', import.meta.url));
const LEASE_MS = 1500;
/** How long each step may take: far beyond the lease, so that a loaded machine does not fail it. */
const WAIT_MS = 60_000;
const TG = { token: '12345:failover', chat: -100777 };
const ADA = { id: 42, first_name: 'Ada' };

function model(request: MessagesRequest): ScriptedReply {
  const result = lastToolResult(request);
  if (result) return { text: `ack ${String(result.content)}` };
  return lastUserText(request) === 'ask' ? { text: 'Let me ask.', toolUse: { name: 'AskUserQuestion', input: { questions: [dbQuestion()] } } } : { text: 'ok' };
}

let fake: AnthropicServer;
let telegram: FakeTelegram;
let cluster: RelayNodes;
let lb: LoadBalancer;
let cwd: string;
const clients: Client[] = [];

beforeAll(async () => {
  fake = await startAnthropicServer({ model });
  telegram = await startFakeTelegram(TG);
  cwd = mkdtempSync(join(tmpdir(), 'askrelay-failover-'));
  const env = {
    ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: 'dummy',
    ASKRELAY_WAIT: '1h',
    ASKRELAY_MCP_GRACE: '30s',
    ASKRELAY_TELEGRAM_TOKEN: TG.token,
    ASKRELAY_TELEGRAM_CHAT: String(TG.chat),
    ASKRELAY_TELEGRAM_ANSWERERS: String(ADA.id),
    ASKRELAY_TELEGRAM_API_ROOT: telegram.url,
  };
  // node-0 first, alone: it takes the chat channel and the push queue; node-1 joins after.
  cluster = await startNodes(1, { lease: `${LEASE_MS}ms`, env });
  await cluster.add();
  lb = await startLoadBalancer(cluster.nodes.map((n) => n.url));
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  await lb?.stop();
  await cluster?.stop();
  await telegram?.close();
  await fake?.close();
  rmSync(cwd, { recursive: true, force: true });
});

interface NodeView {
  id: string;
  holds: { sessions: number; mcpCalls: number; streams: number };
  leases: string[];
}
const nodesSeenBy = async (i: number) => ((await (await cluster.api(i, '/api/nodes')).json()) as { nodes: NodeView[] }).nodes;
const viaLb = (path: string, init?: Parameters<typeof apiAt>[2]) => apiAt(lb.url, path, init);
const cardMessages = () => telegram.sent.filter((m) => m.html.startsWith('<b>Question'));

/** `askrelay mcp` pointed at the load balancer, as an MCP client spawns it; resolves once connected. */
async function bridge(): Promise<{ client: Client; stderr(): string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env: { ASKRELAY_URL: lb.url, ASKRELAY_TOKEN: NODES_TOKEN, PATH: process.env.PATH ?? '' }, cwd, stderr: 'pipe' });
  let stderr = '';
  transport.stderr!.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'failover-test', version: '1.0.0' });
  clients.push(client);
  await client.connect(transport);
  return { client, stderr: () => stderr };
}

type ToolResult = { content: { type: string; text: string }[]; structuredContent?: { cardId?: string } };

it('SIGKILL of the node holding cards, a session, the chat channel and an MCP call: the other node takes them over and nothing is lost or answered twice', { timeout: 6 * WAIT_MS }, async () => {
  // 100 pending cards made on node-0, each with its own question.
  for (let i = 0; i < 100; i++) {
    const res = await cluster.api(0, '/api/cards', { method: 'POST', json: { questions: [{ id: 'q1', text: `Card ${i}?`, options: ['Yes', 'No'] }] } });
    expect(res.status, cluster.describe()).toBe(201);
  }
  // An agent session on node-0, waiting on its card.
  const started = await cluster.api(0, '/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt: 'ask' } });
  expect(started.status).toBe(201);
  const session = (await started.json()) as Session;
  const sessionCard = await waitUntil(
    async () => ((await (await cluster.api(1, `/api/cards?sessionId=${session.id}&status=pending`)).json()) as { cards: Card[] }).cards[0],
    'the session to ask',
  );
  // An MCP call through HAProxy that lands on node-0 (a new MCP session goes to either node: try again until it is node-0).
  let call: Promise<ToolResult> | undefined;
  let mcp: Awaited<ReturnType<typeof bridge>> | undefined;
  // Each attempt asks its own question: an abandoned attempt's card is a card of its own (posted to the chat too).
  let attempts = 0;
  for (; attempts < 6 && !call; attempts++) {
    const candidate = await bridge();
    const pending = candidate.client.callTool({ name: 'ask_user', arguments: { questions: [{ question: `Deploy tonight? (${attempts})`, options: [{ label: 'Yes' }, { label: 'No' }] }] } }, undefined, { timeout: 5 * WAIT_MS }) as Promise<ToolResult>;
    pending.catch(() => {});
    const where = await waitUntil(async () => (await nodesSeenBy(1)).find((n) => n.holds.mcpCalls > 0)?.id, 'the MCP call to wait on a node', WAIT_MS);
    if (where === 'node-0') {
      call = pending;
      mcp = candidate;
    } else {
      await candidate.client.close();
      await waitUntil(async () => (await nodesSeenBy(1)).every((n) => n.holds.mcpCalls === 0), 'the abandoned call to end', WAIT_MS);
    }
  }
  expect(call, 'an MCP call on node-0').toBeDefined();
  const mcpCard = await waitUntil(async () => {
    const cards = ((await (await cluster.api(1, '/api/cards?status=pending')).json()) as { cards: Card[] }).cards;
    return cards.filter((c) => c.provider === 'cursor').at(-1);
  }, 'the MCP card');
  // node-0 posted every card to the chat, once: the 100, the session's and each MCP attempt's.
  const asked = 101 + attempts;
  await waitUntil(() => cardMessages().length >= asked || undefined, `node-0 to post ${asked} cards to Telegram`, 30_000);
  const before = (await nodesSeenBy(1)).find((n) => n.id === 'node-0')!;
  expect(before.leases).toEqual(expect.arrayContaining(['push', 'channels', `session:${session.id}`]));
  expect(before.holds.sessions).toBe(1);

  await cluster.kill(0, 'SIGKILL');
  const killedAt = Date.now();

  // node-1 holds all of it within the lease (and a round of its lease keeper).
  const after = await waitUntil(async () => {
    const me = (await nodesSeenBy(1)).find((n) => n.id === 'node-1');
    return me && ['push', 'channels', `session:${session.id}`].every((l) => me.leases.includes(l)) && me;
  }, 'node-1 to take the leases over', WAIT_MS);
  const tookMs = Date.now() - killedAt;
  console.log(`failover: node-1 held push, channels and the session ${tookMs} ms after the SIGKILL (lease ${LEASE_MS} ms)`);
  expect(after.leases).toContain(`session:${session.id}`);
  // From its next heartbeat on, the list shows node-1 alone, running the session.
  await waitUntil(async () => {
    const list = await nodesSeenBy(1);
    return list.length === 1 && list[0].id === 'node-1' && list[0].holds.sessions === 1;
  }, 'the node list to show node-1 alone with the session', WAIT_MS);

  // The session resumed on node-1: its card, answered through the balancer, reaches the model.
  const answered = await viaLb(`/api/cards/${sessionCard.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['SQLite'] } } } });
  expect(answered.status).toBe(200);
  const done = await waitUntil(async () => {
    const s = (await (await viaLb(`/api/sessions/${session.id}`)).json()) as Session;
    return s.status === 'idle' && s.transcript!.at(-1)?.role === 'assistant' && s;
  }, 'the session to finish its turn on node-1', WAIT_MS);
  expect(done.transcript!.at(-1)!.text).toBe('ack Your questions have been answered: "Which database?"="SQLite". You can now continue with these answers in mind.');

  // The MCP call: the bridge reconnected through HAProxy to node-1 and re-sent it; it re-attaches to its card.
  await waitUntil(() => /re-sent 1 unanswered request/.test(mcp!.stderr()) || undefined, 'the bridge to re-send its call', WAIT_MS);
  expect((await viaLb(`/api/cards/${mcpCard.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['No'] } } } })).status).toBe(200);
  const result = await call!;
  expect(result.content).toEqual([{ type: 'text', text: `Deploy tonight? (${attempts - 1}) → No` }]);
  expect(result.structuredContent?.cardId).toBe(mcpCard.id);

  // The chat channel: node-1 posts a new card and takes a tap on it.
  const fresh = (await (await viaLb('/api/cards', { method: 'POST', json: { questions: [{ id: 'q1', text: 'After the failover?', options: ['Yes', 'No'] }] } })).json()) as Card;
  const message = await waitUntil(() => cardMessages().find((m) => m.text.includes('After the failover?')), 'node-1 to post the new card', WAIT_MS);
  telegram.tap(ADA, message.message_id, message.reply_markup.inline_keyboard[0][0].callback_data);
  const tapped = await waitUntil(async () => {
    const c = (await (await viaLb(`/api/cards/${fresh.id}`)).json()) as Card;
    return c.status === 'answered' && c;
  }, 'the tap to answer through node-1', WAIT_MS);
  expect(tapped.answeredBy).toEqual({ kind: 'human', id: 'telegram:42', surface: 'telegram' });

  // Nothing lost: the 100 cards are still pending, and each takes its one answer now.
  const pending = ((await (await viaLb('/api/cards?status=pending&limit=1000')).json()) as { cards: Card[] }).cards;
  const hundred = pending.filter((c) => /^Card \d+\?$/.test(c.questions[0].text));
  expect(hundred).toHaveLength(100);
  const statuses = await Promise.all(hundred.map(async (c) => (await viaLb(`/api/cards/${c.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Yes'] } } } })).status));
  expect(statuses.every((s) => s === 200)).toBe(true);
  // Nothing twice: one post per card in the chat, one answer per card in the audit log, and the chain is one chain.
  const texts = cardMessages().map((m) => m.text.match(/Card \d+\?|Which database\?|Deploy tonight\? \(\d\)|After the failover\?/)?.[0]);
  expect(texts).toHaveLength(asked + 1);
  expect(new Set(texts).size).toBe(texts.length);
  const audit = ((await (await viaLb('/api/audit?limit=10000')).json()) as { entries: { event: string; cardId?: string }[] }).entries;
  const answers = audit.filter((e) => e.event === 'card.answered').map((e) => e.cardId);
  expect(answers).toHaveLength(new Set(answers).size);
  expect(answers).toHaveLength(103);
  expect(audit.some((e) => e.event === 'card.cancelled' && e.cardId === mcpCard.id)).toBe(false);
  expect(((await (await viaLb('/api/audit/verify')).json()) as { ok: boolean }).ok).toBe(true);
});
