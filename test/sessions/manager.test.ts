import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { Relay } from '../../src/relay/relay.js';
import { SessionManager } from '../../src/sessions/manager.js';
import type { RunnerContext, RunnerFactory } from '../../src/sessions/runner.js';
import { asyncSessions } from '../../src/store/session-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncCards } from '../../src/store/store.js';
import { FakeClock } from '../support/fake-clock.js';
import { waitUntil } from '../support/wait-until.js';

// The manager's own rules, with a runner the test drives step by step: the provider
// runners are tested against real SDKs in test/providers/.

const MINUTE = 60_000;
let dir: string;
let clock: FakeClock;
let store: SqliteStore;
let relay: Relay;
let ctx: RunnerContext;
let finishTurn: () => void;

const scripted: RunnerFactory = {
  engines: ['scripted'],
  defaultModel: () => 'm',
  create(context) {
    ctx = context;
    const turn = () => new Promise<void>((resolve) => (finishTurn = resolve));
    return { start: turn, send: turn, stop: async () => {} };
  },
};

let manager: SessionManager;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'askrelay-sessions-'));
  clock = new FakeClock();
  store = new SqliteStore(join(dir, 'askrelay.sqlite'));
  relay = new Relay({ store: asyncCards(store), clock, waits: { default: 60 * MINUTE } });
  await relay.start();
  manager = new SessionManager({ relay, store: asyncSessions(store.sessions), providers: { claude: scripted }, clock, stuckAfterMs: 10 * MINUTE });
});
afterEach(async () => {
  await manager.close();
  relay.stop();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const status = async (id: string) => (await manager.get(id)).status;
const tick = () => new Promise((r) => setImmediate(r));

it('a session\'s labels go on each card it asks, under the card\'s own', async () => {
  const s = await manager.start({ provider: 'claude', prompt: 'go', labels: { team: 'payments', env: 'prod' } });
  expect(s.labels).toEqual({ team: 'payments', env: 'prod' });
  void ctx.ask({ questions: [{ text: 'Which DB?', options: ['A', 'B'] }], toolCallId: 't1', labels: { env: 'staging' } });
  const card = await waitUntil(async () => (await relay.list({ sessionId: s.id }))[0], 'the card');
  expect(card.labels).toEqual({ team: 'payments', env: 'staging' });
});

it('flags a running turn with no activity as stuck, never one that waits on a card', async () => {
  const s = await manager.start({ provider: 'claude', prompt: 'go' });
  expect(await status(s.id)).toBe('running');
  clock.advance(9 * MINUTE);
  await manager.checkStuck();
  expect(await status(s.id)).toBe('running');
  clock.advance(MINUTE);
  await manager.checkStuck();
  expect(await status(s.id)).toBe('stuck');
  ctx.heartbeat();
  expect(await status(s.id)).toBe('running');

  const asked = ctx.ask({ questions: [{ text: 'Which DB?', options: ['A', 'B'] }], toolCallId: 't1' });
  await tick(); // the card is stored before the session waits on it
  expect(await status(s.id)).toBe('waiting');
  clock.advance(30 * MINUTE);
  await manager.checkStuck();
  expect(await status(s.id)).toBe('waiting');
  const [card] = await relay.list({ sessionId: s.id });
  await relay.answer(card.id, { q1: { selected: ['B'] } });
  expect(((await asked) as Card).answer).toEqual({ q1: { selected: ['B'] } });
  expect(await status(s.id)).toBe('running');
  finishTurn();
  await tick();
  expect(await status(s.id)).toBe('idle');
});

it('activity reported while the turn waits on a card (an SDK streaming events) leaves it waiting, never stuck', async () => {
  const s = await manager.start({ provider: 'claude', prompt: 'go' });
  const asked = ctx.ask({ questions: [{ text: 'Which DB?', options: ['A', 'B'] }], toolCallId: 't2' });
  await tick(); // the card is stored before the session waits on it
  ctx.heartbeat();
  expect(await status(s.id)).toBe('waiting');
  clock.advance(30 * MINUTE);
  await manager.checkStuck();
  expect(await status(s.id)).toBe('waiting');
  const [card] = await relay.list({ sessionId: s.id });
  await relay.answer(card.id, { q1: { selected: ['A'] } });
  await asked;
  expect(await status(s.id)).toBe('running');
});

it('a card asked for a session carries the session, its provider, engine and relay mode', async () => {
  const s = await manager.start({ provider: 'claude', prompt: 'go', relayMode: 'manual' });
  void ctx.ask({ questions: [{ text: 'Q?' }], toolCallId: 'call' });
  await tick();
  const [card] = await relay.list({ sessionId: s.id });
  expect(card).toMatchObject({ sessionId: s.id, provider: 'claude', engine: 'scripted', relayMode: 'manual' });
  await manager.stop(s.id);
  expect((await relay.get(card.id)).status).toBe('cancelled');
  expect(await status(s.id)).toBe('stopped');
});

it('keeps the transcript in order and refuses messages unless idle', async () => {
  const s = await manager.start({ provider: 'claude', prompt: 'first' });
  ctx.log('assistant', 'working on it');
  await expect(manager.message(s.id, 'too early')).rejects.toThrow(/working/);
  finishTurn();
  await tick();
  await manager.message(s.id, 'second');
  expect((await manager.get(s.id)).transcript!.map((e) => [e.role, e.text])).toEqual([
    ['user', 'first'],
    ['assistant', 'working on it'],
    ['user', 'second'],
  ]);
});

it('of two messages sent at once to an idle session, one runs and the other finds it busy', async () => {
  const s = await manager.start({ provider: 'claude', prompt: 'first' });
  finishTurn();
  await tick();
  expect(await status(s.id)).toBe('idle');
  const results = await Promise.allSettled([manager.message(s.id, 'a'), manager.message(s.id, 'b')]);
  expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
  expect((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason.message).toMatch(/working/);
  expect((await manager.get(s.id)).transcript!.filter((e) => e.role === 'user')).toHaveLength(2);
});

it('a session stopped while it is being started never runs its turn', async () => {
  const starting = manager.start({ provider: 'claude', prompt: 'go' });
  // The record exists once start() has stored it; stop it before its turn begins.
  const id = await waitForSession();
  const stopped = await manager.stop(id);
  expect(stopped.status).toBe('stopped');
  expect((await starting).status).toBe('stopped');
  expect(await status(id)).toBe('stopped');
});

async function waitForSession(): Promise<string> {
  for (;;) {
    const [session] = await manager.list();
    if (session) return session.id;
    await Promise.resolve();
  }
}

it('gives an engine its own card wait and ask_user variants, and asks the provider about a start request', async () => {
  const variant: RunnerFactory = {
    ...scripted,
    engines: ['plain', 'patient'],
    waitsMs: { patient: 2 * MINUTE },
    askUserVariants: { patient: ['classic', 'form'] },
  };
  const own = new SessionManager({ relay, store: asyncSessions(store.sessions), providers: { copilot: variant, claude: scripted }, clock });
  try {
    const patient = await own.start({ provider: 'copilot', engine: 'patient', prompt: 'go' });
    expect(patient.askUserVariant).toBe('classic');
    const card = await relay.create({ questions: [{ text: 'placeholder' }] }); // the relay's default: 60 minutes
    expect(Date.parse(card.expiresAt) - Date.parse(card.createdAt)).toBe(60 * MINUTE);
    void ctx.ask({ questions: [{ text: 'Which DB?', options: ['A', 'B'] }], toolCallId: 't1' });
    const asked = await waitForCard(patient.id);
    expect(Date.parse(asked.expiresAt) - Date.parse(asked.createdAt)).toBe(2 * MINUTE);
    void ctx.ask({ questions: [{ text: 'How long?' }], toolCallId: 't2', waitSeconds: 30 });
    const own30 = (await waitForCards(patient.id, 2)).find((c) => c.questions[0].text === 'How long?')!;
    expect(Date.parse(own30.expiresAt) - Date.parse(own30.createdAt)).toBe(30_000);

    const plain = await own.start({ provider: 'copilot', engine: 'plain', prompt: 'go' });
    expect(plain.askUserVariant).toBeUndefined();
    expect(plain.plan).toBeUndefined();
    // Only a provider with a plan mode (Codex) starts in it.
    await expect(own.start({ provider: 'copilot', engine: 'plain', plan: true, prompt: 'go' })).rejects.toThrow('copilot has no plan mode to start in; plan is for codex.');
    await expect(own.start({ provider: 'copilot', engine: 'plain', askUserVariant: 'form', prompt: 'go' })).rejects.toThrow(
      'askUserVariant "form" is not offered by copilot\'s plain engine.',
    );
    const refusing = new SessionManager({
      relay,
      store: asyncSessions(store.sessions),
      providers: { copilot: { ...variant, checkStart: ({ engine, askUserVariant }) => (askUserVariant === 'form' && engine !== 'patient' ? 'form is the patient engine\'s' : undefined) } },
      clock,
    });
    await expect(refusing.start({ provider: 'copilot', engine: 'plain', askUserVariant: 'form', prompt: 'go' })).rejects.toThrow("form is the patient engine's");
    await refusing.close();
    expect(own.startSchema.safeParse({ provider: 'grok', prompt: 'go' }).success).toBe(false);
    expect(own.startSchema.safeParse({ provider: 'copilot', prompt: 'go' }).success).toBe(true);
  } finally {
    await own.close();
  }
});

const waitForCards = (sessionId: string, count: number): Promise<Card[]> =>
  waitUntil(async () => {
    const cards = await relay.list({ sessionId });
    return cards.length >= count ? cards : undefined;
  }, `${count} cards of ${sessionId}`);
const waitForCard = async (sessionId: string): Promise<Card> => (await waitForCards(sessionId, 1))[0];

it("gives the runner the session's own agent token, never the operator's, and the relay's URL once it is known", async () => {
  let url: string | undefined;
  const own = new SessionManager({
    relay,
    store: asyncSessions(store.sessions),
    providers: { claude: scripted },
    clock,
    env: { PATH: '/bin', ASKRELAY_TOKEN: 'operator-token', ASKRELAY_URL: 'http://operator.example/' },
    relayUrl: () => url,
  });
  try {
    const s = await own.start({ provider: 'claude', prompt: 'go' });
    // Not yet listening: blank, never the operator's own ASKRELAY_URL.
    expect(ctx.env).toEqual({ PATH: '/bin', ASKRELAY_TOKEN: own.agentToken(s.id), ASKRELAY_URL: '' });
    url = 'http://127.0.0.1:7070/';
    expect(ctx.env.ASKRELAY_URL).toBe('http://127.0.0.1:7070/');
  } finally {
    await own.close();
  }
});
