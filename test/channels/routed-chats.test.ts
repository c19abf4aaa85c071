import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { decodeCallback } from '../../src/channels/telegram/message.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram-api.js';
import type { FakeClock } from '../support/fake-clock.js';
import { startRelayWithClock, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// Routes and a chat channel (docs/routing.md), through a whole relay and Telegram's Bot API
// played locally: a card is posted only where its route sends it, in the chat the rule names
// (two chats on one platform), a card routed to people only is not posted, an escalation to
// the channel posts it then, and whoever acts in the chat a restricted card was routed to may
// answer it. Two nodes: cards made on either node, posted by the one holding the channels.

const TOKEN = '123456:routed-chats';
const TEAM = -1001;
const OPS = -1002;
const ANY = { id: 77, first_name: 'Sam' };
const MIN = 60_000;
let fake: FakeTelegram;
let relay: TestRelay;
let clock: FakeClock;
let adaToken: string;

beforeAll(async () => {
  fake = await startFakeTelegram({ token: TOKEN, chat: TEAM, others: [OPS] });
  ({ relay, clock } = await startRelayWithClock({
    ASKRELAY_WAIT: '1h',
    ASKRELAY_TELEGRAM_TOKEN: TOKEN,
    ASKRELAY_TELEGRAM_CHAT: String(TEAM),
    ASKRELAY_TELEGRAM_ANSWERERS: '*',
    ASKRELAY_TELEGRAM_API_ROOT: fake.url,
  }));
  adaToken = ((await (await relay.api('/api/users', { method: 'POST', json: { name: 'ada' } })).json()) as { token: string }).token;
  const routes = [
    { name: 'ops', match: { labels: { team: 'ops' } }, to: [`telegram:${OPS}`], restrict: true },
    { name: 'ada-first', match: { labels: { team: 'web' } }, to: ['ada'], escalate: [{ after: '10m', to: ['telegram'] }] },
  ];
  expect((await relay.api('/api/routes', { method: 'PUT', json: { routes } })).status).toBe(200);
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
});

const ask = async (labels?: Record<string, string>) => {
  const res = await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Roll back?', options: ['Yes', 'No'] }], ...(labels ? { labels } : {}) } });
  expect(res.status).toBe(201);
  return (await res.json()) as Card;
};
/** The card each card message is about, and the chat it went to. */
const posts = () => fake.sent.map((m) => ({ card: decodeCallback(m.reply_markup.inline_keyboard[0][0].callback_data)?.cardId, chat: m.chat.id }));
/**
 * Until the chat outbox is empty: every post and edit went out and is recorded (a reply to a
 * message the relay has not recorded yet would answer nothing). Asked of the store through the
 * API, as whichever node holds the channels (a lease that moved on a loaded machine) delivers.
 */
const settle = () =>
  waitUntil(async () => {
    const { channels } = (await (await relay.api('/api/channels')).json()) as { channels: { id: string; queued: number }[] };
    return channels.find((c) => c.id === 'telegram')?.queued === 0;
  }, 'the chat outbox to empty');

describe('a chat channel with routes', () => {
  it('posts each card only where its route sends it', async () => {
    const ops = await ask({ team: 'ops' });
    const web = await ask({ team: 'web' });
    const plain = await ask();
    await waitUntil(() => fake.sent.length >= 2, 'two posts');
    await settle();
    expect(posts()).toEqual(expect.arrayContaining([{ card: ops.id, chat: OPS }, { card: plain.id, chat: TEAM }]));
    expect(fake.sent).toHaveLength(2);
    expect(web.routedTo).toEqual(['ada']);
    expect(plain.routedTo).toBeUndefined();

    // Ten minutes on, the web card escalates to the channel, and is posted in its own chat.
    clock.advance(10 * MIN);
    await waitUntil(() => fake.sent.length === 3, 'the escalated card posted');
    await settle();
    expect(posts()[2]).toEqual({ card: web.id, chat: TEAM });
    expect((await relay.relay.get(web.id)).routedTo).toEqual(['ada', 'telegram']);
  });

  it('someone in the chat a restricted card went to answers it there; others see no such card', async () => {
    const card = await ask({ team: 'ops' });
    // A person it is not routed to: no such card.
    expect((await relay.api(`/api/cards/${card.id}`, { headers: { authorization: `Bearer ${adaToken}` } })).status).toBe(404);
    const message = await waitUntil(() => fake.sent.find((m) => m.chat.id === OPS && !fake.sent.slice(0, 3).includes(m)), 'the post in the ops chat');
    await settle();
    fake.tap(ANY, message.message_id, message.reply_markup.inline_keyboard[1][0].callback_data);
    const answered = await waitUntil(async () => {
      const now = await relay.relay.get(card.id);
      return now.status === 'answered' && now;
    }, 'the tap to answer');
    expect(answered.answer).toEqual({ q1: { selected: ['No'] } });
    expect(answered.answeredBy).toEqual({ kind: 'human', id: `telegram:${ANY.id}`, surface: 'telegram' });
    await settle();
    await waitUntil(() => message.edits.length === 1, 'the closing edit');
  });

  it('a typed reply in a route\'s chat answers its card', async () => {
    const card = await ask({ team: 'ops' });
    const before = fake.sent.length;
    await waitUntil(() => fake.sent.length > before, 'the post');
    await settle();
    const message = fake.sent[fake.sent.length - 1];
    expect(message.chat.id).toBe(OPS);
    fake.reply(ANY, message.message_id, 'Yes');
    const answered = await waitUntil(async () => {
      const now = await relay.relay.get(card.id);
      return now.status === 'answered' && now;
    }, 'the reply to answer');
    expect(answered.answer).toEqual({ q1: { selected: ['Yes'] } });
  });
});
