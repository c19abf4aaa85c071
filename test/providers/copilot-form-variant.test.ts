import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Answer, Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { lastToolMessage, lastUserText, startOpenAIServer, toolNames, type ChatRequest, type OpenAIServer, type ScriptedChatReply } from '../fakes/openai-server.js';
import { FakeClock } from '../support/fake-clock.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// The extension engine's form variant (askUserVariant "form"): the Copilot CLI 1.0.102 from
// @github/copilot offers the model ask_user {message, requestedSchema}; askrelay shows a
// form card and answers accept / decline / cancel. The CLI unpacks itself once into a cache
// kept under node_modules/.cache, so only the first run pays for it. The relays' clocks move
// only when a test says: a card waits for its answer however slow the machine, and the card
// that is to expire does so when its test moves its relay's clock.

const CACHE = fileURLToPath(new URL('../../node_modules/.cache/askrelay-copilot-cli', import.meta.url));
const FORMS: Record<string, unknown> = {
  two: { message: 'Pick things', requestedSchema: { properties: { colors: { type: 'array', items: { type: 'string', enum: ['Red', 'Green', 'Blue'] } }, size: { type: 'string', enum: ['S', 'M', 'L'] } } } },
  one: { message: 'Pick a color', requestedSchema: { properties: { color: { type: 'string', enum: ['Red', 'Green'] } } } },
  skip: { message: 'Pick a color', requestedSchema: { properties: { color: { type: 'string', enum: ['Red', 'Green'] } } } },
  expire: { message: 'Pick a color', requestedSchema: { properties: { color: { type: 'string', enum: ['Red', 'Green'] } } } },
};

function model(request: ChatRequest): ScriptedChatReply {
  if (lastToolMessage(request)) return { text: 'ack' };
  const name = /\[case=(\w+)\]/.exec(lastUserText(request))?.[1] ?? '';
  return FORMS[name] ? { toolCalls: [{ name: 'ask_user', arguments: FORMS[name] }] } : { text: `no case ${name}` };
}

let fake: OpenAIServer;
let relay: TestRelay;
/** The relay of the case whose card expires: moving its clock expires no other case's card. */
let expiring: TestRelay;
const expiringClock = new FakeClock(Date.now());
let home: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'askrelay-copilot-form-'));
  fake = await startOpenAIServer({ model });
  const env = { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test', HOME: home, ASKRELAY_WORKDIR: home, XDG_CACHE_HOME: CACHE, ASKRELAY_WAIT_EXTENSION: '2s' };
  [relay, expiring] = await Promise.all([
    startTestRelay(env, undefined, '0', { clock: new FakeClock(Date.now()) }),
    startTestRelay(env, undefined, '0', { clock: expiringClock }),
  ]);
});
afterAll(async () => {
  await relay.stop();
  await expiring.stop();
  await fake.close();
  rmSync(home, { recursive: true, force: true });
});

async function run(name: string, answer: Answer | 'skip' | 'expire'): Promise<{ card: Card; read: string }> {
  const on = answer === 'expire' ? expiring : relay;
  const res = await on.api('/api/sessions', { method: 'POST', json: { provider: 'openai', engine: 'extension', askUserVariant: 'form', model: 'gpt-scripted', prompt: `Set it up. [case=${name}]` } });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as Session;
  const card = await waitUntil(async () => ((await (await on.api(`/api/cards?sessionId=${id}`)).json()) as { cards: Card[] }).cards[0], `the form of ${name}`, 90_000);
  if (answer === 'skip') await on.api(`/api/cards/${card.id}/skip`, { method: 'POST' });
  else if (answer === 'expire') expiringClock.advance(2000);
  else expect((await on.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: answer } })).status).toBe(200);
  await waitUntil(async () => {
    const s = (await (await on.api(`/api/sessions/${id}`)).json()) as Session;
    if (s.status === 'failed') throw new Error(`session failed: ${s.error}`);
    return s.status === 'idle';
  }, `${name} idle`, 30_000);
  const request = fake.requests.find((r) => r.body?.messages && lastToolMessage(r.body) && JSON.stringify(r.body.messages).includes(`[case=${name}]`));
  return { card, read: lastToolMessage(request!.body)!.content };
}

it('a form card with one field per property; accept reads field=value pairs', async () => {
  const { card, read } = await run('two', { colors: { selected: ['Red', 'Green'] }, size: { selected: ['S'] } });
  expect(card).toMatchObject({ layout: 'form', engine: 'extension', origin: 'native', title: 'Pick things' });
  expect(card.questions.map((q) => [q.id, q.field?.type])).toEqual([['colors', 'choices'], ['size', 'choice']]);
  expect(Date.parse(card.expiresAt) - Date.parse(card.createdAt)).toBe(2000);
  expect(read).toBe('User responded: colors=Red, Green, size=S');
  // The Copilot CLI offers the relay tool too, after its own tools (ask_user among them).
  const first = fake.requests.find((r) => r.body?.tools && JSON.stringify(r.body.messages).includes('[case=two]'));
  expect(toolNames(first!.body).slice(-4)).toEqual(['list_questions', 'answer_question', 'start_session', 'watch_session']);
}, 120_000);

it.concurrent.each([
  ['one', { color: { selected: ['Red'] } }, 'User responded: Red'],
  ['skip', 'skip', 'The user is not available to respond and will review your work later. Work autonomously and make good decisions. If the request is genuinely ambiguous or unresolvable, stop and call task_complete summarizing the ambiguity rather than proceeding on an unfounded assumption.'],
  ['expire', 'expire', 'User cancelled the request.'],
] as const)('%s', async (name, answer, expected) => {
  expect((await run(name, answer as unknown as Answer)).read).toBe(expected);
}, 120_000);
