import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { DEMO_QUESTION, lastToolResult, lastUserText, startAnthropicServer, type AnthropicServer, type ScriptedModel } from '../fakes/anthropic-server.js';
import { runCli } from '../support/cli.js';
import { closedPort } from '../support/closed-port.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// `askrelay session …` as a person at a terminal runs it: the real command as a child
// process, a real relay, real sessions on the messages engine (@anthropic-ai/sdk) against
// the scripted Anthropic server.

// A prompt with "[ask]" asks the demo's AskUserQuestion; the answer is acknowledged; any
// other typed message is echoed back.
const model: ScriptedModel = (request) => {
  const result = lastToolResult(request);
  if (result) return { text: `Thanks — I will go with: ${result.content}` };
  const text = lastUserText(request);
  if (text.includes('[ask]')) return { text: 'Let me ask.', toolUse: { name: 'AskUserQuestion', input: DEMO_QUESTION } };
  return { text: `continued: ${text}` };
};

const BIN = fileURLToPath(new URL('../../bin/askrelay.js', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'askrelay-cli-session-'));
let fake: AnthropicServer;
let relay: TestRelay;

const relayEnv = () => ({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', DEEPSEEK_BASE_URL: fake.url, DEEPSEEK_API_KEY: '' });
const cli = (on: TestRelay, args: string[]) => runCli(args, { ASKRELAY_URL: on.url, ASKRELAY_TOKEN: 'test-token-0123456789abcdef' }, scratch);
const run = (...args: string[]) => cli(relay, args);

/** Like runCli, but the output can be read while the command runs. */
function spawnCli(on: TestRelay, args: string[]) {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ASKRELAY_')));
  const child = spawn(process.execPath, [BIN, ...args], { cwd: scratch, env: { ...clean, ASKRELAY_URL: on.url, ASKRELAY_TOKEN: 'test-token-0123456789abcdef' } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { stdout: () => stdout, done };
}

async function session(id: string, on = relay): Promise<Session> {
  return (await (await on.api(`/api/sessions/${id}`)).json()) as Session;
}

const pendingCard = (sessionId: string, on = relay) =>
  waitUntil(async () => {
    const { cards } = (await (await on.api(`/api/cards?status=pending&sessionId=${sessionId}`)).json()) as { cards: Card[] };
    return cards[0];
  }, `a card of ${sessionId}`);

const statusOf = (sessionId: string, status: Session['status'], on = relay) =>
  waitUntil(async () => {
    const s = await session(sessionId, on);
    return s.status === status ? s : undefined;
  }, `${sessionId} ${status}`);

async function answer(cardId: string, label: string, on = relay): Promise<void> {
  const res = await on.api(`/api/cards/${cardId}/answer`, { method: 'POST', json: { answers: { q1: { selected: [label] } } } });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  fake = await startAnthropicServer({ model });
  relay = await startTestRelay(relayEnv());
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe('askrelay session', { timeout: 60_000 }, () => {
  it('starts, lists, shows, refuses a message while busy, takes one when idle, and stops', async () => {
    const started = await run('session', 'start', '--provider', 'claude', '--engine', 'messages', 'Help me pick a database [ask]');
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    const match = started.stdout.match(/^Started (s_[0-9a-f]+) \(claude, messages, claude-sonnet-5\): (starting|running)\.\n/);
    expect(match, started.stdout).not.toBeNull();
    const id = match![1];
    expect(started.stdout).toContain(`askrelay session show ${id} --follow`);

    const card = await pendingCard(id);
    await statusOf(id, 'waiting');

    const listed = await run('session', 'list');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+PROVIDER\s+ENGINE\s+MODEL\s+STATUS\s+MODE\s+UPDATED$/);
    expect(lines.find((l) => l.startsWith(id))).toMatch(new RegExp(`^${id}\\s+claude\\s+messages\\s+claude-sonnet-5\\s+waiting\\s+autopilot\\s+\\d+s ago$`));
    const listedJson = await run('session', 'list', '--json');
    expect(JSON.parse(listedJson.stdout).sessions.map((s: Session) => s.id)).toContain(id);

    const shown = await run('session', 'show', id);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`Session ${id} (claude, messages, claude-sonnet-5)\nStatus:  waiting\nMode:    autopilot; only you answer its cards\n`);
    expect(shown.stdout).toMatch(/\d\d:\d\d:\d\d {2}user {7}Help me pick a database \[ask\]\n/);
    expect(shown.stdout).toMatch(/assistant {2}Let me ask\.\n/);
    expect(shown.stdout).toContain(`card       ${card.id} — DB: Which database?  1) PostgreSQL  2) SQLite`);
    expect(shown.stdout).toContain(`answer on the page or: askrelay answer ${card.id} <value>`);
    const shownJson = JSON.parse((await run('session', 'show', id, '--json')).stdout) as Session;
    expect(shownJson).toMatchObject({ id, status: 'waiting', transcript: [{ role: 'user', text: 'Help me pick a database [ask]' }, { role: 'assistant' }] });

    const busy = await run('session', 'send', id, 'Never mind');
    expect(busy).toMatchObject({ code: 1, stdout: '' });
    expect(busy.stderr).toBe('askrelay session: The agent is waiting on a card; send the message when the session is idle.\n');

    await answer(card.id, 'SQLite');
    await statusOf(id, 'idle');
    const after = await run('session', 'show', id);
    const result = 'Your questions have been answered: "Which database?"="SQLite". You can now continue with these answers in mind.';
    expect(after.stdout).toContain(`Status:  idle\n`);
    expect(after.stdout).toContain(`tool       ${result}  [${card.id}]\n`);
    expect(after.stdout).toContain(`assistant  Thanks — I will go with: ${result}\n`);
    expect(after.stdout).not.toContain('answer on the page');

    const sent = await run('session', 'send', id, 'Use PostgreSQL after all');
    expect(sent).toMatchObject({ code: 0, stdout: `Sent to ${id}: running.\n` });
    await statusOf(id, 'idle');
    expect((await session(id)).transcript?.at(-1)).toMatchObject({ role: 'assistant', text: 'continued: Use PostgreSQL after all' });

    // --follow prints from the new message on, until the turn ends.
    const followed = await run('session', 'send', id, 'And a cache?', '--follow');
    expect(followed.code).toBe(0);
    expect(followed.stdout).toMatch(/user {7}And a cache\?\n/);
    expect(followed.stdout).toMatch(/assistant {2}continued: And a cache\?\n/);
    expect(followed.stdout).toContain(`idle       the turn ended; send the next message with: askrelay session send ${id} "<text>"`);
    expect(followed.stdout).not.toContain('Use PostgreSQL after all');

    const stopped = await run('session', 'stop', id);
    expect(stopped).toMatchObject({ code: 0, stdout: `Stopped ${id}.\n` });
    expect((await session(id)).status).toBe('stopped');
    const again = await run('session', 'stop', id, '--json');
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ id, status: 'stopped' });
    const closed = await run('session', 'send', id, 'Hello?');
    expect(closed).toMatchObject({ code: 1, stderr: 'askrelay session: The session is stopped.\n' });
  });

  it('stopping a session that waits on a card cancels the card', async () => {
    const started = await run('session', 'start', '-p', 'claude', '-e', 'messages', '--manual', '--agents-may-answer', '--json', 'Pick one [ask]');
    expect(started.code).toBe(0);
    const created = JSON.parse(started.stdout) as Session;
    expect(created).toMatchObject({ provider: 'claude', engine: 'messages', relayMode: 'manual', agentsMayAnswer: true });
    const card = await pendingCard(created.id);
    expect((await run('session', 'stop', created.id)).code).toBe(0);
    const res = await relay.api(`/api/cards/${card.id}`);
    expect(((await res.json()) as Card).status).toBe('cancelled');
  });

  it('start --follow prints the transcript and each card until the turn ends', async () => {
    const own = await startTestRelay(relayEnv());
    try {
      const child = spawnCli(own, ['session', 'start', '--provider', 'claude', '--engine', 'messages', '--follow', 'Help me pick a database [ask]']);
      const card = await waitUntil(async () => {
        const { cards } = (await (await own.api('/api/cards?status=pending')).json()) as { cards: Card[] };
        return cards[0];
      }, 'the card');
      await waitUntil(() => child.stdout().includes(card.id), 'the card in the output'); // shown before it closes
      await answer(card.id, 'PostgreSQL', own);
      const done = await child.done;
      expect(done.stderr).toBe('');
      expect(done.code).toBe(0);
      const out = done.stdout;
      expect(out).toMatch(/^Session s_[0-9a-f]+ \(claude, messages, claude-sonnet-5\)\n/);
      const order = [
        'user       Help me pick a database [ask]',
        'assistant  Let me ask.',
        `card       ${card.id} — DB: Which database?  1) PostgreSQL  2) SQLite`,
        'tool       Your questions have been answered: "Which database?"="PostgreSQL".',
        'assistant  Thanks — I will go with:',
        'idle       the turn ended',
      ].map((text) => out.indexOf(text));
      expect(order.every((at) => at >= 0), out).toBe(true);
      expect([...order].sort((a, b) => a - b)).toEqual(order);
    } finally {
      await own.stop();
    }
  });

  it('--follow --json prints the settled session; a failed session is exit 1 with its error', async () => {
    const failed = await run('session', 'start', '--provider', 'deepseek', '--engine', 'messages', '--follow', 'Hello');
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/failed {5}DEEPSEEK_API_KEY is not set/);
    expect(failed.stderr).toMatch(/^askrelay session: s_[0-9a-f]+ failed: DEEPSEEK_API_KEY is not set: DeepSeek sessions need it/);

    const json = await run('session', 'start', '--provider', 'claude', '--engine', 'messages', '--follow', '--json', 'Hello there');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      status: 'idle',
      transcript: [{ role: 'user', text: 'Hello there' }, { role: 'assistant', text: 'continued: Hello there' }],
    });
  });

  it('says what is wrong: unknown session, unknown provider, missing arguments', async () => {
    for (const args of [['show', 's_nope'], ['send', 's_nope', 'hi'], ['stop', 's_nope']]) {
      const out = await run('session', ...args);
      expect(out, args.join(' ')).toMatchObject({ code: 1, stdout: '', stderr: 'askrelay session: No session "s_nope".\n' });
    }
    const provider = await run('session', 'start', '--provider', 'mistral', 'Hi');
    expect(provider.code).toBe(1);
    expect(provider.stderr).toMatch(/^askrelay session: provider: .*"claude"/);
    const engine = await run('session', 'start', '--provider', 'claude', '--engine', 'turbo', 'Hi');
    expect(engine).toMatchObject({ code: 1, stderr: 'askrelay session: "turbo" is not an engine of claude; use code or messages.\n' });

    expect((await run('session', 'start', 'Hi')).stderr).toMatch(/give the provider/);
    expect((await run('session', 'start', '--provider', 'claude')).stderr).toMatch(/give the prompt/);
    expect((await run('session', 'start', '--provider', 'claude', 'Pick', 'one')).stderr).toMatch(/one quoted argument/);
    expect((await run('session', 'show')).stderr).toMatch(/give exactly one session id/);
    expect((await run('session', 'send', 's_x')).stderr).toMatch(/give the message/);
    expect((await run('session', 'bogus')).stderr).toMatch(/unknown subcommand "bogus"/);
    expect((await run('session', 'list', '--nope')).stderr).toMatch(/Unknown option '--nope'.*askrelay session list --help/);
  });

  it('has help for the command and each subcommand', async () => {
    const top = await run('session', '--help');
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('Usage: askrelay session <subcommand>');
    for (const sub of ['start', 'list', 'show', 'send', 'stop']) {
      const out = await run('session', sub, '--help');
      expect(out.code, sub).toBe(0);
      expect(out.stdout).toContain(`Usage: askrelay session ${sub}`);
    }
    const bare = await run('session');
    expect(bare.code).toBe(1);
    // The providers come from the relay's registry (GET /api/providers), the default engine marked.
    const start = (await run('session', 'start', '--help')).stdout;
    expect(start).toContain('Providers and engines on the relay:\n  claude (Claude; the relay reads ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY)\n    --engine code       Claude Code (default)\n');
    expect(start).toContain('  grok (Grok; the relay reads XAI_BASE_URL, XAI_API_KEY)\n    --engine chat       Chat Completions; no question tool, Grok asks in its reply (default)\n');
    expect(start).not.toMatch(/claude or deepseek|claude\|deepseek/);
    const away = await runCli(['session', 'start', '--help'], { ASKRELAY_URL: `http://127.0.0.1:${await closedPort()}`, ASKRELAY_TOKEN: 'test-token-0123456789abcdef' }, scratch);
    expect(away.code).toBe(0);
    expect(away.stdout).toMatch(/Providers and engines: a running relay lists them \(GET \/api\/providers\); this one did not: cannot reach the relay/);
    const main = await run('--help');
    expect(main.stdout).toMatch(/session +start, list, show/);
    expect(main.stdout).toMatch(/demo +try it without any key/);
  });
});
