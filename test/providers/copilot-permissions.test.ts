import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Answer, Card } from '../../src/cards/model.js';
import { serveConfig } from '../../src/config.js';
import { SERVE_HELP } from '../../src/cli/serve-command.js';
import type { Session } from '../../src/sessions/model.js';
import { lastToolMessage, lastUserText, startOpenAIServer, type ChatRequest, type OpenAIServer, type ScriptedChatReply } from '../fakes/openai-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// The Copilot runtime's permission requests (here: a shell command that writes a file) as
// approval cards only a human answers, through the real runtime offline. What the model
// reads is taken from the scripted server's request log.

const command = (file: string) => `echo hi > ${file} && cat ${file}`;

function model(request: ChatRequest): ScriptedChatReply {
  if (lastToolMessage(request)) return { text: 'ack' };
  const file = /\[file=([\w.]+)\]/.exec(lastUserText(request))?.[1];
  return file ? { toolCalls: [{ name: 'bash', arguments: { command: command(file), description: 'write a file' } }] } : { text: 'no file' };
}

let fake: OpenAIServer;
let relay: TestRelay;
let approving: TestRelay;
let home: string;
let work: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'askrelay-copilot-perm-home-'));
  work = mkdtempSync(join(tmpdir(), 'askrelay-copilot-perm-work-'));
  fake = await startOpenAIServer({ model });
  const env = { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test', HOME: home, ASKRELAY_WORKDIR: work };
  [relay, approving] = await Promise.all([startTestRelay(env), startTestRelay({ ...env, ASKRELAY_APPROVE_TOOLS: '1' })]);
});
afterAll(async () => {
  await Promise.all([relay?.stop(), approving?.stop()]);
  await fake?.close();
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

async function start(file: string, on: TestRelay): Promise<Session> {
  const res = await on.api('/api/sessions', { method: 'POST', json: { provider: 'openai', engine: 'sdk', model: 'gpt-scripted', prompt: `Write it. [file=${file}]` } });
  expect(res.status).toBe(201);
  return (await res.json()) as Session;
}
const pendingCard = (id: string, on: TestRelay) =>
  waitUntil(async () => ((await (await on.api(`/api/cards?sessionId=${id}&status=pending`)).json()) as { cards: Card[] }).cards[0], `a card of ${id}`, 30_000);
const cardsOf = async (id: string, on: TestRelay) => ((await (await on.api(`/api/cards?sessionId=${id}`)).json()) as { cards: Card[] }).cards;

/** The tool result the model read for a file's call, once the session is idle again. */
async function modelRead(session: Session, file: string, on: TestRelay): Promise<{ read: string; done: Session }> {
  const done = await waitUntil(async () => {
    const s = (await (await on.api(`/api/sessions/${session.id}`)).json()) as Session;
    if (s.status === 'failed') throw new Error(`session failed: ${s.error}`);
    return s.status === 'idle' && s;
  }, `${session.id} idle`, 30_000);
  const request = fake.requests.find((r) => r.body?.messages && lastToolMessage(r.body) && JSON.stringify(r.body.messages).includes(`[file=${file}]`));
  return { read: lastToolMessage(request!.body)!.content, done };
}

async function answer(card: Card, answers: Answer) {
  expect((await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers } })).status).toBe(200);
}

describe('permission requests become approval cards', () => {
  it.concurrent('Allow runs the command: the model reads its output and the file exists', async () => {
    const s = await start('allowed.txt', relay);
    const card = await pendingCard(s.id, relay);
    expect(card).toMatchObject({ kind: 'approval', tool: 'permission:shell', origin: 'native' });
    expect(card.questions[0].text).toContain(command('allowed.txt'));
    expect(card.questions[0].options.map((o) => o.label)).toEqual(['Allow', 'Deny']);
    expect(existsSync(join(work, 'allowed.txt'))).toBe(false);
    await answer(card, { allow: { selected: ['Allow'] } });
    const { read, done } = await modelRead(s, 'allowed.txt', relay);
    expect(read).toMatch(/^hi\n<shellId: \d+ completed with exit code 0>$/);
    expect(readFileSync(join(work, 'allowed.txt'), 'utf8')).toBe('hi\n');
    expect(done.transcript!.at(-1)!.text).toBe('ack');
  });

  it.concurrent('Deny with a reason: the model reads the reason and the turn goes on', async () => {
    const s = await start('denied.txt', relay);
    const card = await pendingCard(s.id, relay);
    await answer(card, { allow: { selected: ['Deny'], text: 'not in this folder' } });
    const { read, done } = await modelRead(s, 'denied.txt', relay);
    expect(read).toBe('The user rejected this tool call. User feedback: The user denied this tool use: not in this folder');
    expect(existsSync(join(work, 'denied.txt'))).toBe(false);
    // The turn continued: the model was asked again and answered.
    expect(done.transcript!.at(-1)!.text).toBe('ack');
  });

  it.concurrent('ASKRELAY_APPROVE_TOOLS=1 runs it without a card', async () => {
    const s = await start('approved.txt', approving);
    const { read } = await modelRead(s, 'approved.txt', approving);
    expect(read).toMatch(/^hi\n<shellId: \d+ completed with exit code 0>$/);
    expect(readFileSync(join(work, 'approved.txt'), 'utf8')).toBe('hi\n');
    expect(await cardsOf(s.id, approving)).toEqual([]);
  });
});

describe('askrelay serve --approve-tools', () => {
  it('puts ASKRELAY_APPROVE_TOOLS=1 into the providers\' environment, and only with the flag', () => {
    expect(serveConfig({ approveTools: true }, { PATH: '/bin' }).env).toEqual({ PATH: '/bin', ASKRELAY_APPROVE_TOOLS: '1' });
    expect(serveConfig({}, { PATH: '/bin' }).env).toEqual({ PATH: '/bin' });
  });

  it('is documented in --help', () => {
    expect(SERVE_HELP).toContain('--approve-tools');
    expect(SERVE_HELP).toMatch(/--approve-tools[\s\S]*without an approval card/);
  });
});
