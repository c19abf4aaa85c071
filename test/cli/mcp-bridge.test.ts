import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { FakeClock } from '../support/fake-clock.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { cardsAskedBy, MCP_TOOLS, MCP_TIMING_ENV, mcpClients, type ToolResult } from '../support/mcp-tools.js';
import { waitUntil } from '../support/wait-until.js';

// askrelay mcp: the stdio bridge, spawned by the real MCP SDK client (StdioClientTransport)
// exactly as Cursor or Claude Code would spawn it, forwarding to a real relay's /mcp. The
// relays' clocks move only when the test says: progress beats and the re-attach grace come
// when the test has what they act on in place.

const BIN = fileURLToPath(new URL('../../bin/askrelay.js', import.meta.url));

const PROGRESS_MS = 30_000;
const GRACE_MS = 60_000;

let relay: TestRelay;
let clock: FakeClock;
let cwd: string;
const clients: Client[] = [];
const httpClients = mcpClients('http-test');

beforeAll(async () => {
  clock = new FakeClock(Date.now());
  relay = await startTestRelay({ ...MCP_TIMING_ENV, ASKRELAY_WAIT: '90m' }, undefined, '0', { clock });
  cwd = mkdtempSync(join(tmpdir(), 'askrelay-mcp-bridge-'));
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
  await httpClients.closeAll();
});
afterAll(async () => {
  await relay.stop();
  rmSync(cwd, { recursive: true, force: true });
});

interface Bridge {
  client: Client;
  transport: StdioClientTransport;
  stderr: () => string;
  /** The bridge process's exit code once it has exited. */
  exited: Promise<number | null>;
}

/** Spawns `askrelay mcp` through the SDK's stdio client transport; does not connect yet. */
function bridge(env: Record<string, string>, args: string[] = []): Bridge {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', ...args], env, cwd, stderr: 'pipe' });
  let stderr = '';
  transport.stderr!.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'bridge-test', version: '1.0.0' });
  clients.push(client);
  let exit!: (code: number | null) => void;
  const exited = new Promise<number | null>((r) => (exit = r));
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    // The SDK keeps the child private; its exit code is what this test is about.
    const child = (transport as unknown as { _process: ChildProcess })._process;
    // 'close', not 'exit': only then has all of the child's stderr been read.
    child.on('close', (code) => exit(code));
    // The SDK's close() (which a failed connect() calls) SIGTERMs a child still running 2 s
    // after its stdin closed; on a loaded machine that can come before the bridge's own exit,
    // whose code these tests are about. Close only the pipe, and kill only what hangs.
    transport.close = async () => {
      child.stdin?.end();
      const hung = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(hung);
    };
  };
  return { client, transport, stderr: () => stderr, exited };
}

const env = () => ({ ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: relay.token });

const askedByCursor = cardsAskedBy('cursor', 1500);
const nextCard = () => askedByCursor(relay.relay);

/** The pending card asking `text` on `target`. */
const nextCardOn = (target: TestRelay, text = 'Which database?'): Promise<Card> =>
  waitUntil(async () => (await target.relay.list({ status: 'pending' })).find((c) => c.questions[0].text === text), `a card asking "${text}"`);

const waitFor = (check: () => boolean | Promise<boolean>, what: string) => waitUntil(check, what);

async function answer(id: string, answers: unknown) {
  const res = await relay.api(`/api/cards/${id}/answer`, { method: 'POST', json: { answers } });
  expect(res.status).toBe(200);
}

const DB = { question: 'Which database?', header: 'Database', options: [{ label: 'PostgreSQL (Recommended)' }, { label: 'SQLite' }] };
const NAME = { question: 'What is the project called?' };
const call = (client: Client, args: unknown, options = {}) =>
  client.callTool({ name: 'ask_user', arguments: args as Record<string, unknown> }, undefined, options) as Promise<ToolResult>;

describe('askrelay mcp: the stdio bridge to /mcp', () => {
  it('lists ask_user, and exits 0 when stdin closes', async () => {
    const b = bridge(env());
    await b.client.connect(b.transport);
    expect(b.client.getServerVersion()?.name).toBe('askrelay');
    const { tools } = await b.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(MCP_TOOLS);
    await b.client.close(); // ends the child's stdin
    expect(await b.exited).toBe(0);
    expect(b.stderr()).toBe('');
  });

  it('a call blocks until the card is answered and returns the same as over HTTP', async () => {
    const b = bridge(env());
    await b.client.connect(b.transport);
    let settled = false;
    const progress: unknown[] = [];
    const pending = call(b.client, { questions: [DB, NAME] }, { onprogress: (p: unknown) => progress.push(p) }).finally(() => (settled = true));
    const card = await nextCard();
    // A progress notification comes through the bridge ahead of any result: an interval after
    // the card, the call was still waiting.
    await waitFor(() => clock.armed(PROGRESS_MS) === 1, 'the progress beat to be armed');
    clock.advance(PROGRESS_MS);
    await waitFor(() => progress.length === 1, 'a progress notification');
    expect(settled).toBe(false);
    const answers = { q1: { selected: ['SQLite'] }, q2: { selected: [], text: 'askrelay' } };
    await answer(card.id, answers);
    const viaBridge = await pending;

    const { client: http } = await httpClients.connect(relay.url, relay.token);
    const overHttp = call(http, { questions: [DB, NAME] });
    const httpCard = await nextCard();
    await answer(httpCard.id, answers);
    const viaHttp = await overHttp;

    expect(viaBridge.isError).toBeFalsy();
    expect(viaBridge.content).toEqual([{ type: 'text', text: 'Which database? → SQLite\nWhat is the project called? → (free text) askrelay' }]);
    expect(viaBridge.content).toEqual(viaHttp.content);
    expect(viaBridge.structuredContent).toEqual({ ...viaHttp.structuredContent, cardId: card.id });
  });

  it('--dialect openclaw: one pending question per bridge, as OpenClaw allows per session', async () => {
    const b = bridge(env(), ['--dialect', 'openclaw']);
    await b.client.connect(b.transport);
    const question = { id: 'db', header: 'Database', question: 'Which database?', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }] };
    const first = call(b.client, { questions: [question] });
    const card = await cardsAskedBy('openclaw', 1500)(relay.relay);
    const second = await call(b.client, { questions: [{ ...question, id: 'db2' }] });
    expect(second).toEqual({
      content: [{ type: 'text', text: 'ask_user already has a pending question for this session; wait for it to resolve before asking another' }],
      isError: true,
    });
    await answer(card.id, { db: { selected: ['SQLite'] } });
    expect((await first).structuredContent).toEqual({ status: 'answered', answers: { answers: { db: ['SQLite'] } } });
  });

  it('progress notifications and cancellation pass through', async () => {
    const b = bridge(env());
    await b.client.connect(b.transport);
    const progress: { progress: number; message?: string }[] = [];
    const abort = new AbortController();
    const pending = call(b.client, { questions: [NAME] }, {
      signal: abort.signal,
      onprogress: (p: { progress: number; message?: string }) => progress.push(p),
    });
    const card = await nextCard();
    for (let n = 1; n <= 3; n++) {
      await waitFor(() => clock.armed(PROGRESS_MS) === 1, `progress beat ${n} to be armed`);
      clock.advance(PROGRESS_MS);
      await waitFor(() => progress.length === n, `progress notification ${n}`);
    }
    expect(progress).toEqual([1, 2, 3].map((n) => ({ progress: n, message: `Waiting for the user's answer (card ${card.id}).` })));
    abort.abort('moved on');
    await expect(pending).rejects.toThrow();
    // Cancelled by the client, not by the grace: the clock has not moved since.
    await waitFor(async () => (await relay.relay.get(card.id)).status === 'cancelled', 'the card to be cancelled');
    expect(clock.armed(GRACE_MS)).toBe(0);
  });

  it('a relay restart while a call waits: the bridge re-sends it and the client gets the answer from the same card', async () => {
    const data = mkdtempSync(join(tmpdir(), 'askrelay-mcp-restart-'));
    let own = await startTestRelay({ ...MCP_TIMING_ENV, ASKRELAY_WAIT: '90m' }, data);
    const port = new URL(own.url).port;
    try {
      const b = bridge({ ASKRELAY_URL: own.url, ASKRELAY_TOKEN: own.token });
      await b.client.connect(b.transport);
      const pending = call(b.client, { questions: [DB] }, { timeout: 60_000, onprogress: () => {} });
      const card = await nextCardOn(own);
      // A call straight over HTTP, which nobody re-sends after the restart: its card is
      // cancelled when the grace runs out, which shows when that has happened.
      const { client: http } = await httpClients.connect(own.url, own.token);
      const lost = call(http, { questions: [NAME] }, { timeout: 60_000 }).catch(() => 'gone');
      const orphan = await nextCardOn(own, NAME.question);
      await own.stop();
      await http.close();
      expect(await lost).toBe('gone');
      const ownClock = new FakeClock(Date.now());
      own = await startTestRelay({ ...MCP_TIMING_ENV, ASKRELAY_WAIT: '90m' }, data, port, { clock: ownClock });
      // The restart gives both cut-off calls the grace to come back.
      await waitFor(() => ownClock.armed(GRACE_MS) === 2, 'the graces of the cut-off calls');
      // The bridge comes back on its own and takes the card over; nothing new is asked.
      await waitFor(() => /reconnected; re-sent 1 unanswered request/.test(b.stderr()), 'the bridge to reconnect');
      await waitFor(() => ownClock.armed(PROGRESS_MS) === 1, 'the re-sent call to wait on its card');
      ownClock.advance(GRACE_MS);
      await waitFor(async () => (await own.relay.get(orphan.id)).status === 'cancelled', 'the orphan to be cancelled');
      expect((await own.relay.list({ status: 'pending' })).map((c) => c.id)).toEqual([card.id]);
      const res = await own.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['SQLite'] } } } });
      expect(res.status).toBe(200);
      const result = await pending;
      expect(result.content).toEqual([{ type: 'text', text: 'Which database? → SQLite' }]);
      expect(result.structuredContent?.cardId).toBe(card.id);
      expect(b.stderr()).toMatch(/^askrelay mcp: lost the relay at .*; reconnecting \(1 unanswered\)\.\n/);
      // It goes on working on the new session.
      expect((await b.client.listTools()).tools.map((t) => t.name)).toEqual(MCP_TOOLS);
    } finally {
      await own.stop();
      rmSync(data, { recursive: true, force: true });
    }
  });

  it('a relay that stays away: waiting calls get an error and the bridge exits 1 after ASKRELAY_MCP_RECONNECT', async () => {
    const data = mkdtempSync(join(tmpdir(), 'askrelay-mcp-away-'));
    const own = await startTestRelay({ ...MCP_TIMING_ENV, ASKRELAY_WAIT: '90m' }, data);
    try {
      const b = bridge({ ASKRELAY_URL: own.url, ASKRELAY_TOKEN: own.token, ASKRELAY_MCP_RECONNECT: '1s' });
      await b.client.connect(b.transport);
      const pending = call(b.client, { questions: [DB] }, { timeout: 60_000 });
      await nextCardOn(own);
      await own.stop();
      await expect(pending).rejects.toThrow(/gave up reconnecting after 1 s: cannot reach the relay/);
      expect(await b.exited).toBe(1);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });

  it('a wrong token: the client gets an error, the bridge exits 1 saying why on stderr', async () => {
    const b = bridge({ ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: 'nope' });
    await expect(b.client.connect(b.transport)).rejects.toThrow(/refused the token from ASKRELAY_TOKEN/);
    expect(await b.exited).toBe(1);
    expect(b.stderr()).toMatch(/^askrelay mcp: the relay at .* refused the token from ASKRELAY_TOKEN; [^\n]*\n$/); // one line
  });

  it('an unreachable relay: an error, exit 1 and a message on stderr', async () => {
    const b = bridge({ ASKRELAY_URL: 'http://127.0.0.1:9', ASKRELAY_TOKEN: 'x' });
    await expect(b.client.connect(b.transport)).rejects.toThrow(/cannot reach the relay/);
    expect(await b.exited).toBe(1);
    expect(b.stderr()).toMatch(/askrelay mcp: cannot reach the relay at http:\/\/127\.0\.0\.1:9\//);
  });

  it('refuses an unknown dialect (exit 1)', async () => {
    const b = bridge(env(), ['--dialect', 'gemini']);
    await expect(b.client.connect(b.transport)).rejects.toThrow();
    expect(await b.exited).toBe(1);
    expect(b.stderr()).toMatch(/--dialect must be cursor or openclaw/);
  });

  it('refuses a dialect named like an Object.prototype member (exit 1)', async () => {
    const b = bridge(env(), ['--dialect', 'toString']);
    await expect(b.client.connect(b.transport)).rejects.toThrow();
    expect(await b.exited).toBe(1);
    expect(b.stderr()).toMatch(/--dialect must be cursor or openclaw, not "toString"/);
  });
});
