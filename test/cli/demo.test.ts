import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { waitUntil } from '../support/wait-until.js';

// `askrelay demo` as a newcomer runs it: the real command as a child process, with no key
// and nothing but loopback. The cards come from the scripted model through the real
// provider engines; Ctrl+C (SIGINT) ends it cleanly.

const BIN = fileURLToPath(new URL('../../bin/askrelay.js', import.meta.url));
const RESULT = 'Your questions have been answered: "Which database?"="SQLite". You can now continue with these answers in mind.';

interface Demo {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  exited: Promise<number | null>;
  url: string;
  token: string;
  dataDir: string;
  api(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
}

const running: Demo[] = [];
afterEach(() => {
  for (const demo of running.splice(0)) if (demo.child.exitCode === null) demo.child.kill('SIGKILL');
});

async function startDemo(args: string[]): Promise<Demo> {
  // No ANTHROPIC_*/DEEPSEEK_*/ASKRELAY_* from the test's own environment: the demo needs none.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(ASKRELAY_|ANTHROPIC_|DEEPSEEK_)/.test(k)));
  const child = spawn(process.execPath, [BIN, 'demo', ...args], { env });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const partial = { child, output: () => out, exited };
  running.push(partial as Demo);
  const [, url, token, dataDir] = await waitUntil(
    () => out.match(/^Page: (http:\/\/127\.0\.0\.1:\d+\/)\nToken: (\S+)\nData: (\S+)/m) ?? (child.exitCode !== null ? Promise.reject(new Error(`demo exited: ${out}`)) : undefined),
    'the page and token',
    20_000,
  );
  return {
    ...partial,
    url,
    token,
    dataDir,
    api(path, init = {}) {
      const { json, ...rest } = init;
      return fetch(new URL(path, url), {
        ...rest,
        headers: { authorization: `Bearer ${token}`, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });
    },
  };
}

async function pendingCards(demo: Demo, count: number, timeoutMs: number): Promise<Card[]> {
  return waitUntil(
    async () => {
      const { cards } = (await (await demo.api('api/cards?status=pending')).json()) as { cards: Card[] };
      return cards.length >= count ? cards : undefined;
    },
    `${count} cards (demo said:\n${demo.output()})`,
    timeoutMs,
  );
}

async function sessionOf(demo: Demo, id: string): Promise<Session> {
  return (await (await demo.api(`api/sessions/${id}`)).json()) as Session;
}

/** Answers the card with SQLite; its session ends the turn with the answer in its transcript. */
async function answerAndSeeIdle(demo: Demo, card: Card, result = RESULT): Promise<Session> {
  const res = await demo.api(`api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { [card.questions[0].id]: { selected: ['SQLite'] } } } });
  expect(res.status).toBe(200);
  const session = await waitUntil(async () => {
    const s = await sessionOf(demo, card.sessionId!);
    return s.status === 'idle' ? s : undefined;
  }, `${card.sessionId} idle`);
  expect(session.transcript).toContainEqual(expect.objectContaining({ role: 'tool', text: result, cardId: card.id }));
  // The scripted agent names only the choice; the demo prints the tool result beside it.
  expect(session.transcript?.at(-1)).toMatchObject({ role: 'assistant', text: 'Going with SQLite.' });
  return session;
}

async function interrupt(demo: Demo): Promise<void> {
  demo.child.kill('SIGINT');
  expect(await demo.exited).toBe(0);
  expect(demo.output()).toContain('Stopping the demo');
  expect(existsSync(demo.dataDir)).toBe(false); // the fresh data folder is gone
}

describe('askrelay demo', { timeout: 120_000 }, () => {
  it('--no-code: a claude and a deepseek card appear, an answer ends a turn, Ctrl+C stops it', async () => {
    const demo = await startDemo(['--port', '0', '--no-code']);
    expect(demo.output()).toContain('askrelay demo: a scripted model plays the agents');
    expect(demo.output()).toContain('Press Ctrl+C to stop the demo.');

    const cards = await pendingCards(demo, 2, 10_000);
    expect(cards).toHaveLength(2);
    expect(cards.map((c) => `${c.provider}/${c.engine}`).sort()).toEqual(['claude/messages', 'deepseek/messages']);
    for (const card of cards) {
      expect(card).toMatchObject({ tool: 'AskUserQuestion', questions: [{ header: 'DB', text: 'Which database?' }] });
    }
    await waitUntil(() => cards.every((c) => demo.output().includes(`— card ${c.id}`)), 'a line per card');
    expect(demo.output()).toMatch(/claude\/messages {4}asks DB: Which database\? {2}1\) PostgreSQL {2}2\) SQLite {2}— card c_/);

    const claude = cards.find((c) => c.provider === 'claude')!;
    await answerAndSeeIdle(demo, claude);
    await waitUntil(() => demo.output().includes('claude/messages    turn ended: Going with SQLite.'), 'the turn-ended line');
    expect(demo.output()).toContain(`claude/messages    received: ${RESULT}\n`);
    expect(demo.output()).toContain("claude/messages      (askrelay's own Messages loop wrote it, byte for byte as Claude Code writes AskUserQuestion's result)\n");
    expect(demo.output()).not.toContain('answered. One answer'); // one of two so far
    const deepseek = await sessionOf(demo, cards.find((c) => c.provider === 'deepseek')!.sessionId!);
    expect(deepseek.status).toBe('waiting');

    await interrupt(demo);
  });

  it('with the agent runtimes: eight cards (claude and deepseek on both engines, copilot, openai, codex, gemini)', async () => {
    const demo = await startDemo(['--port', '0']);
    const cards = await pendingCards(demo, 8, 90_000);
    expect(cards.map((c) => `${c.provider}/${c.engine}`).sort()).toEqual([
      'claude/code',
      'claude/messages',
      'codex/acp',
      'copilot/sdk',
      'deepseek/code',
      'deepseek/messages',
      'gemini/acp',
      'openai/sdk',
    ]);
    const received: Record<string, string> = {
      sdk: 'User selected: SQLite',
      'codex/acp': '{"action":"accept","content":{"db":"SQLite"}}',
      'gemini/acp': 'Which database? → SQLite',
    };
    for (const card of cards) await answerAndSeeIdle(demo, card, received[`${card.provider}/${card.engine}`] ?? received[card.engine!] ?? RESULT);
    await waitUntil(() => demo.output().includes('All 8 answered.'), 'the closing lines');
    const out = demo.output();
    expect(out).toContain('copilot/sdk        received: User selected: SQLite\n');
    expect(out).toContain("copilot/sdk          (askrelay's ask_user answered the Copilot runtime in Copilot's own words (User selected / User responded))\n");
    expect(out).toContain(`claude/code        received: ${RESULT}\n`);
    expect(out).toContain('claude/code          (Claude Code wrote it itself, from the answer askrelay handed back to its AskUserQuestion tool)\n');
    expect(out).toContain('codex/acp          received: {"action":"accept","content":{"db":"SQLite"}}\n');
    expect(out).toContain('gemini/acp         received: Which database? → SQLite\n');
    expect(out).toMatch(/All 8 answered\. One answer, and each agent received it in its own provider's words[^\n]*\nTry next:\n {2}askrelay session send s_\w+ "Ask me again"/);
    expect(out.match(/ turn ended: Going with SQLite\.\n/g)).toHaveLength(8);
    await interrupt(demo);
  });

  it('has help, and refuses a taken port with advice', async () => {
    const help = spawn(process.execPath, [BIN, 'demo', '--help']);
    let out = '';
    help.stdout.on('data', (d) => (out += d));
    expect(await new Promise((r) => help.on('close', r))).toBe(0);
    expect(out).toContain('Usage: askrelay demo [--port N] [--data DIR] [--no-code]');

    const first = await startDemo(['--port', '0', '--no-code']);
    const port = new URL(first.url).port;
    const second = spawn(process.execPath, [BIN, 'demo', '--port', port, '--no-code']);
    let err = '';
    second.stderr.on('data', (d) => (err += d));
    expect(await new Promise((r) => second.on('close', r))).toBe(1);
    expect(err).toContain(`askrelay demo: port ${port} is taken`);
    await interrupt(first);
  });
});
