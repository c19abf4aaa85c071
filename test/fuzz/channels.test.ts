import { fc, test } from '@fast-check/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CardSchema, type Card, type CardDraft } from '../../src/cards/model.js';
import { discordChannel } from '../../src/channels/discord/index.js';
import { mattermostChannel } from '../../src/channels/mattermost/index.js';
import { slackChannel } from '../../src/channels/slack/index.js';
import { telegramChannel } from '../../src/channels/telegram/index.js';
import { buttonPress, discordApp, modalSubmit, sendInteraction, startFakeDiscord, type DiscordApp, type FakeDiscord } from '../fakes/discord-api.js';
import { startMattermostApi, type MattermostFake } from '../fakes/mattermost-api.js';
import { deliver, startFakeSlack, type FakeSlack } from '../fakes/slack-api.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram-api.js';
import { FakeClock } from '../support/fake-clock.js';
import { startChannelHarness, stopHarnessAndFake, type ChannelHarness } from '../support/channel-harness.js';
import { anyJson, FUZZ_TIMEOUT_MS, hostileText, replyFrom, reportSlowestCases, runs } from './fuzz-support.js';

// Each chat platform's inbound payloads, generated and delivered the way the platform
// delivers them (signed webhooks for Slack, Discord and Mattermost; getUpdates for Telegram),
// to the real channel on a real relay core and SQLite file. Taps and replies come from the
// answerer or from someone who is not one, on a live card or on made-up ids. Whatever
// arrives: no 5xx, the card stays a valid card, only the answerer ever changes it, and a
// change is an answer recorded as that answerer's.

reportSlowestCases();

const CARDS: CardDraft[] = [
  { questions: [{ id: 'db', header: 'Database', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] },
  { questions: [{ id: 'colours', text: 'Which colours?', options: ['Red', 'Green', 'Blue'], multiSelect: true }] },
  { questions: [{ id: 'db', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }, { id: 'name', text: 'Its name?' }] },
];
const WORDS = ['PostgreSQL', 'SQLite', 'Red', 'Green', 'Blue', 'db', 'name', 'colours', 'Database'];

/** The card a case plays on: the open one, or a new one of the next shape once it closed. */
async function liveCard(h: ChannelHarness, channel: string, state: { card?: Card; n: number }): Promise<Card> {
  if (!state.card || (await h.relay.get(state.card.id)).status !== 'pending') {
    state.card = await h.ask(CARDS[state.n++ % CARDS.length]);
    await h.idle();
    // A platform (or its client library) may ask the channel to slow down: move the clock on.
    for (let i = 0; !h.store.channels.messageOf(channel, state.card.id) && i < 600; i++) await h.advance(1000);
  }
  return state.card;
}

/** After one delivery: a valid card, unchanged unless the answerer answered it. */
async function expectOnlyTheAnswerer(h: ChannelHarness, before: Card, actor: string, answererId: string, channel: string): Promise<void> {
  const after = CardSchema.parse(await h.relay.get(before.id));
  if (actor !== answererId) {
    expect(after).toEqual(before);
    return;
  }
  if (after.status === 'pending') return expect(after).toEqual(before);
  expect(after.status).toBe('answered');
  expect(after.answeredBy).toEqual({ kind: 'human', id: `${channel}:${answererId}`, surface: channel });
  for (const q of after.questions) expect(Object.hasOwn(after.answer!, q.id)).toBe(true);
}

/** Polls every millisecond (a case must not cost the 20 ms of waitUntil). */
async function until(probe: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!probe()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

describe('fuzz: Slack webhooks', () => {
  const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
  let fake: FakeSlack;
  let h: ChannelHarness;
  const state: { card?: Card; n: number } = { n: 0 };
  beforeAll(async () => {
    fake = await startFakeSlack();
    h = await startChannelHarness({ id: 'slack', make: slackChannel, config: { slack: { token: fake.token, channel: fake.channelName, answerers: ['U0ADA'], signingSecret: SECRET, apiUrl: fake.url } } });
  });
  afterAll(() => stopHarnessAndFake(h, fake));

  const delivery = () =>
    fc.oneof(
      fc.record({ kind: fc.constant('click' as const), button: fc.nat(5), value: fc.option(hostileText(), { nil: undefined }) }),
      fc.record({ kind: fc.constant('reply' as const), text: replyFrom(WORDS) }),
      fc.record({ kind: fc.constant('payload' as const), json: anyJson() }),
    );

  test.prop([delivery(), fc.constantFrom('U0ADA', 'U0EVE')], runs())(
    'interactions and events: no 5xx, and only the answerer changes the card',
    async (d, user) => {
      const card = await liveCard(h, 'slack', state);
      const message = fake.messages.find((m) => h.store.channels.messageOf('slack', card.id)?.message === m.ts)!;
      const before = await h.relay.get(card.id);
      let res: Response;
      if (d.kind === 'click' && message.blocks.some((b: { type: string }) => b.type === 'actions')) {
        const buttons = message.blocks.filter((b: { type: string }) => b.type === 'actions').flatMap((b: { elements: unknown[] }) => b.elements);
        let body = fake.clickBody(message.ts, d.button % buttons.length, user);
        if (d.value !== undefined) {
          const payload = JSON.parse(decodeURIComponent(body.slice('payload='.length)));
          payload.actions[0].value = d.value;
          body = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
        }
        res = await deliver(`${h.url}/channels/slack/interactions`, SECRET, body, h.clock.now());
      } else if (d.kind === 'payload') {
        res = await deliver(`${h.url}/channels/slack/interactions`, SECRET, `payload=${encodeURIComponent(JSON.stringify(d.json))}`, h.clock.now());
      } else {
        res = await deliver(`${h.url}/channels/slack/events`, SECRET, fake.threadReplyBody(message.ts, user, d.kind === 'reply' ? d.text : 'x'), h.clock.now());
      }
      expect(res.status).toBeLessThan(500);
      await h.idle();
      await expectOnlyTheAnswerer(h, before, user, 'U0ADA', 'slack');
    },
    FUZZ_TIMEOUT_MS,
  );
  it('the answerer answered some of the cards (the property reached real answers)', () => expect(state.n).toBeGreaterThan(2));
});

describe('fuzz: Discord interactions', () => {
  const ADA = { id: '200000000000000042', username: 'ada' };
  const EVE = { id: '200000000000000066', username: 'eve' };
  let fake: FakeDiscord;
  let app: DiscordApp;
  let h: ChannelHarness;
  const state: { card?: Card; n: number } = { n: 0 };
  beforeAll(async () => {
    fake = await startFakeDiscord({ token: 'MTEwMDAwMDAwMDAwMDAwMDAwMw.fake.bot-token' });
    app = discordApp();
    h = await startChannelHarness({ id: 'discord', make: discordChannel, config: { discord: { token: 'MTEwMDAwMDAwMDAwMDAwMDAwMw.fake.bot-token', channel: fake.channel, answerers: [ADA.id], publicKey: app.publicKey, apiUrl: fake.url } } });
  });
  afterAll(() => stopHarnessAndFake(h, fake));

  const delivery = () =>
    fc.oneof(
      fc.record({ kind: fc.constant('press' as const), button: fc.nat(5), customId: fc.option(hostileText(), { nil: undefined }) }),
      fc.record({ kind: fc.constant('modal' as const), button: fc.nat(5), value: replyFrom(WORDS) }),
      fc.record({ kind: fc.constant('json' as const), json: anyJson() }),
    );

  test.prop([delivery(), fc.constantFrom(ADA, EVE)], runs())(
    'button presses, modal submits and any JSON: no 5xx, and only the answerer changes the card',
    async (d, who) => {
      const card = await liveCard(h, 'discord', state);
      const ref = h.store.channels.messageOf('discord', card.id)!;
      const message = fake.messages.find((m) => m.id === ref.message)!;
      const ids: string[] = message.components.flatMap((row: { components: { custom_id: string }[] }) => row.components.map((c) => c.custom_id));
      const pick = (n: number) => (ids.length ? ids[n % ids.length] : 'none');
      const before = await h.relay.get(card.id);
      const interaction =
        d.kind === 'press' ? buttonPress(who, d.customId ?? pick(d.button), message) : d.kind === 'modal' ? modalSubmit(who, d.button % 2 ? pick(d.button) : `askrelay:${card.id}:modal`, d.value, message) : d.json;
      const res = await sendInteraction(`${h.url}/channels/discord/interactions`, app, interaction);
      expect(res.status).toBeLessThan(500);
      await h.idle();
      await expectOnlyTheAnswerer(h, before, who.id, ADA.id, 'discord');
    },
    FUZZ_TIMEOUT_MS,
  );
  it('the answerer answered some of the cards (the property reached real answers)', () => expect(state.n).toBeGreaterThan(2));
});

describe('fuzz: Mattermost actions', () => {
  const ALICE = 'aliceid0000000000000000000';
  const MALLORY = 'malloryid00000000000000000';
  let fake: MattermostFake;
  let h: ChannelHarness;
  const state: { card?: Card; n: number } = { n: 0 };
  const clock = new FakeClock(Date.parse('2026-11-30T12:00:00.000Z'));
  const POLL_MS = 2000;
  beforeAll(async () => {
    fake = await startMattermostApi({ now: () => clock.now(), users: { [ALICE]: 'alice', [MALLORY]: 'mallory' } });
    h = await startChannelHarness({ id: 'mattermost', make: mattermostChannel, clock, config: { mattermost: { token: fake.token, url: fake.url, channel: fake.channelId, answerers: [ALICE], pollMs: POLL_MS } } });
  });
  const polls = () => fake.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/posts')).length;
  /** Two polls of the channel: the second starts only once the first (which read the reply) is done. */
  async function pollTwice(): Promise<void> {
    const target = polls() + 2;
    await until(() => {
      if (polls() >= target) return true;
      void h.advance(POLL_MS);
      return false;
    }, 'two polls');
    await h.idle();
  }
  afterAll(() => stopHarnessAndFake(h, fake));

  const delivery = () =>
    fc.oneof(
      fc.record({ kind: fc.constant('click' as const), option: fc.integer({ min: -1, max: 6 }) }),
      fc.record({ kind: fc.constant('json' as const), json: anyJson(), context: fc.option(fc.dictionary(hostileText(), anyJson(), { maxKeys: 4 }), { nil: undefined }) }),
      fc.record({ kind: fc.constant('reply' as const), text: replyFrom(WORDS) }),
    );

  test.prop([delivery(), fc.constantFrom(ALICE, MALLORY)], runs())(
    'button clicks and any action body: no 5xx, and only the answerer changes the card',
    async (d, user) => {
      const card = await liveCard(h, 'mattermost', state);
      const before = await h.relay.get(card.id);
      const post = h.store.channels.messageOf('mattermost', card.id)!.message;
      if (d.kind === 'click') {
        const result = await fake.click({ post, user, option: d.option });
        if (result.integration) expect(result.integration.status).toBeLessThan(500);
      } else if (d.kind === 'reply') {
        fake.reply({ user, root: post, message: d.text || ' ' });
        await pollTwice();
      } else {
        const body = d.context === undefined ? d.json : { user_id: user, post_id: post, context: d.context };
        const res = await fetch(`${h.url}/channels/mattermost/actions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        expect(res.status).toBeLessThan(500);
      }
      await h.idle();
      await expectOnlyTheAnswerer(h, before, user, ALICE, 'mattermost');
    },
    FUZZ_TIMEOUT_MS,
  );
  it('the answerer answered some of the cards (the property reached real answers)', () => expect(state.n).toBeGreaterThan(2));
});

describe('fuzz: Telegram updates', () => {
  const TOKEN = '123456:test-token';
  const CHAT = -1001;
  const ADA = { id: 42, first_name: 'Ada', is_bot: false };
  const EVE = { id: 66, first_name: 'Eve', is_bot: false };
  let fake: FakeTelegram;
  let h: ChannelHarness;
  const state: { card?: Card; n: number } = { n: 0 };
  beforeAll(async () => {
    fake = await startFakeTelegram({ token: TOKEN, chat: CHAT });
    h = await startChannelHarness({ id: 'telegram', make: telegramChannel, config: { telegram: { token: TOKEN, chat: String(CHAT), answerers: [String(ADA.id)], apiRoot: fake.url } } });
  });
  afterAll(() => stopHarnessAndFake(h, fake));

  const delivery = () =>
    fc.oneof(
      fc.record({ kind: fc.constant('tap' as const), button: fc.nat(5), data: fc.option(hostileText(), { nil: undefined }) }),
      fc.record({ kind: fc.constant('reply' as const), text: replyFrom(WORDS), toCard: fc.boolean() }),
    );

  test.prop([delivery(), fc.constantFrom(ADA, EVE)], runs())(
    'taps and replies: handled without a crash, and only the answerer changes the card',
    async (d, who) => {
      const card = await liveCard(h, 'telegram', state);
      const messageId = Number(h.store.channels.messageOf('telegram', card.id)!.message.split('/').pop());
      const message = fake.messages.get(messageId)!;
      const buttons: string[] = (message.reply_markup?.inline_keyboard ?? []).flat().map((b: { callback_data: string }) => b.callback_data);
      const before = await h.relay.get(card.id);
      const handled = fake.requests.length;
      if (d.kind === 'tap') fake.tap(who, messageId, d.data ?? buttons[d.button % Math.max(1, buttons.length)] ?? 'none');
      else fake.reply(who, d.toCard ? messageId : undefined, d.text || ' ');
      // Handled once the channel asked for the updates after it (the fake forgets confirmed ones).
      await until(() => fake.unconfirmed === 0 && fake.requests.length > handled, 'the update to be handled');
      await h.idle();
      await expectOnlyTheAnswerer(h, before, String(who.id), String(ADA.id), 'telegram');
    },
    FUZZ_TIMEOUT_MS,
  );
  it('the answerer answered some of the cards (the property reached real answers)', () => expect(state.n).toBeGreaterThan(2));
});
