import { newPersonalToken, personalTokenHash } from '../../src/store/user-store.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { NOT_AN_ANSWERER } from '../../src/channels/inbox.js';
import { Relay } from '../../src/relay/relay.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncCards } from '../../src/store/store.js';
import { telegramChannel } from '../../src/channels/telegram/index.js';
import { startChannelHarness, stopHarnessAndFake, type ChannelHarness } from '../support/channel-harness.js';
import { runCli } from '../support/cli.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram-api.js';

// The Telegram channel against a local Bot API: grammy's real client, a real relay core and
// SQLite file, a fake clock for rate limits and back-offs.

const TOKEN = '123456:test-token';
const CHAT = -1001;
const ADA = { id: 42, first_name: 'Ada' };
const EVE = { id: 66, first_name: 'Eve' };
const single = { questions: [{ header: 'Database', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] };

let fake: FakeTelegram;
let h: ChannelHarness;

async function start(dataDir?: string) {
  return startChannelHarness({
    id: 'telegram',
    make: telegramChannel,
    config: { telegram: { token: TOKEN, chat: String(CHAT), answerers: [String(ADA.id)], apiRoot: fake.url } },
    ...(dataDir ? { dataDir } : {}),
  });
}

/** The bot's card messages (not prompts or notices). */
const cardMessages = () => fake.sent.filter((m) => m.html.startsWith('<b>Question') || m.html.startsWith('<b>Approval'));

beforeEach(async () => {
  fake = await startFakeTelegram({ token: TOKEN, chat: CHAT });
  h = await start();
});
afterEach(() => stopHarnessAndFake(h, fake));

describe('telegram channel', () => {
  it('a chat user linked to a person (askrelay users link) answers as that person', async () => {
    h.store.users.add('ada', personalTokenHash(newPersonalToken()));
    h.store.users.link('ada', `telegram:${ADA.id}`);
    const card = await h.ask(single);
    await h.idle();
    const [message] = cardMessages();
    fake.tap(ADA, message.message_id, message.reply_markup.inline_keyboard[1][0].callback_data);
    const answered = await waitUntil(async () => {
      const c = await h.relay.get(card.id);
      return c.status === 'answered' && c;
    }, 'the tap to answer');
    expect(answered.answeredBy).toEqual({ kind: 'human', id: 'ada', surface: 'telegram' });
    h.store.audit.flush();
    expect(h.store.audit.list().find((e) => e.cardId === card.id && e.event === 'card.answered')?.actor).toEqual({ kind: 'human', id: 'ada' });
  });

  it('posts a single-choice card with buttons; a tap answers it and the message is edited once', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = cardMessages();
    expect(message.chat.id).toBe(CHAT);
    expect(message.reply_markup.inline_keyboard.map(([b]: any[]) => b.text)).toEqual(['PostgreSQL', 'SQLite', 'Other…']);
    // Message ids count per chat: the chat is part of the key.
    expect(h.store.channels.messageOf('telegram', card.id)).toEqual({ chat: String(CHAT), message: `${CHAT}/${message.message_id}`, closed: false });

    fake.tap(ADA, message.message_id, message.reply_markup.inline_keyboard[0][0].callback_data);
    const answered = await waitUntil(async () => {
      const c = await h.relay.get(card.id);
      return c.status === 'answered' && c;
    }, 'the tap to answer');
    expect(answered.answer).toEqual({ q1: { selected: ['PostgreSQL'] } });
    expect(answered.answeredBy).toEqual({ kind: 'human', id: 'telegram:42', surface: 'telegram' });
    await waitUntil(() => fake.callbackAnswers.length === 1, 'the toast');
    expect(fake.callbackAnswers[0].text).toBe('Answered: PostgreSQL');
    await h.idle();
    expect(message.edits).toHaveLength(1);
    expect(message.text).toBe('Question: Database\n\nWhich database?\n\nAnswered: PostgreSQL');
    expect(message.reply_markup).toEqual({ inline_keyboard: [] });
  });

  it('ignores the same tap within a minute; another button after that is told it was answered', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = cardMessages();
    const [[postgres], [sqlite]] = message.reply_markup.inline_keyboard;
    const data = sqlite.callback_data;
    fake.tap(ADA, message.message_id, data);
    fake.tap(ADA, message.message_id, data);
    await waitUntil(() => fake.callbackAnswers.length === 2, 'both taps answered');
    expect(fake.callbackAnswers.map((a) => a.text)).toEqual(['Answered: SQLite', undefined]);
    fake.tap(ADA, message.message_id, postgres.callback_data);
    await waitUntil(() => fake.callbackAnswers.length === 3, 'the third tap');
    expect(fake.callbackAnswers[2]).toMatchObject({ text: 'Already answered: SQLite.', show_alert: true });
    await h.idle();
    expect((await h.relay.get(card.id)).answer).toEqual({ q1: { selected: ['SQLite'] } });
    expect(message.edits).toHaveLength(1);
  });

  it('refuses a tap from someone who may not answer, politely, and changes nothing', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = cardMessages();
    fake.tap(EVE, message.message_id, message.reply_markup.inline_keyboard[0][0].callback_data);
    await waitUntil(() => fake.callbackAnswers.length === 1, 'the refusal');
    expect(fake.callbackAnswers[0]).toMatchObject({ text: NOT_AN_ANSWERER, show_alert: true });
    expect((await h.relay.get(card.id)).status).toBe('pending');
    expect(message.edits).toHaveLength(0);
    const refused = h.store.audit.list().filter((e) => e.event === 'card.refused');
    expect(refused).toMatchObject([{ cardId: card.id, actor: { kind: 'human', id: 'telegram:66' }, surface: 'telegram', detail: { action: 'answer', code: 'not_an_answerer' } }]);
    // Eve's Other… is refused the same way, without a prompt.
    fake.tap(EVE, message.message_id, message.reply_markup.inline_keyboard[2][0].callback_data);
    await waitUntil(() => fake.callbackAnswers.length === 2, 'the second refusal');
    expect(fake.callbackAnswers[1].text).toBe(NOT_AN_ANSWERER);
    expect(fake.sent).toHaveLength(1);
  });

  it('Other… opens a forced reply without answering; the typed reply answers and is not echoed', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = cardMessages();
    fake.tap(ADA, message.message_id, message.reply_markup.inline_keyboard[2][0].callback_data);
    const prompt = await waitUntil(() => fake.sent.find((m) => m.reply_markup?.force_reply), 'the forced-reply prompt');
    expect(prompt.text).toBe('Ada, type your answer to “Which database?” as a reply to this message.');
    expect(prompt.reply_markup).toEqual({ force_reply: true, selective: true, input_field_placeholder: 'Your answer' });
    expect((await h.relay.get(card.id)).status).toBe('pending');

    fake.reply(ADA, prompt.message_id, 'MariaDB on port 3307');
    const answered = await waitUntil(async () => {
      const c = await h.relay.get(card.id);
      return c.status === 'answered' && c;
    }, 'the reply to answer');
    expect(answered.answer).toEqual({ q1: { selected: [], text: 'MariaDB on port 3307' } });
    await h.idle();
    expect(message.edits).toHaveLength(1);
    expect(message.text.endsWith('Answered: a written answer')).toBe(true);
    expect(fake.sent.some((m) => m.text.includes('MariaDB'))).toBe(false);
  });

  it('multi-select and several questions are answered by replying to the card in text', async () => {
    const colours = await h.ask({ questions: [{ text: 'Which colours?', options: ['Red', 'Green', 'Blue'], multiSelect: true }] });
    const setup = await h.ask({ questions: [{ id: 'db', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }, { id: 'port', text: 'Which port?' }] });
    await h.idle();
    const [first, second] = cardMessages();
    expect(first.reply_markup).toBeUndefined();
    fake.reply(ADA, first.message_id, '1, 3');
    fake.reply(ADA, second.message_id, 'db: 2\nport: 5432');
    await waitUntil(async () => (await h.relay.get(setup.id)).status === 'answered' && (await h.relay.get(colours.id)).status === 'answered', 'both replies');
    expect((await h.relay.get(colours.id)).answer).toEqual({ q1: { selected: ['Red', 'Blue'] } });
    expect((await h.relay.get(setup.id)).answer).toEqual({ db: { selected: ['SQLite'] }, port: { selected: [], text: '5432' } });
    await h.idle();
    expect(first.text.endsWith('Answered: Red, Blue')).toBe(true);
    expect(second.text.endsWith('Answered: db: SQLite; port: a written answer')).toBe(true);
  });

  it('an unreadable reply gets a notice that does not repeat it; the card stays open', async () => {
    const card = await h.ask({ questions: [{ text: 'Which colours?', options: ['Red', 'Green'], multiSelect: true, freeText: false }] });
    await h.idle();
    const [message] = cardMessages();
    const reply = fake.reply(ADA, message.message_id, 'purple sparkles');
    const notice = await waitUntil(() => fake.sent.find((m) => m.reply_to_message?.message_id === reply), 'the notice');
    expect(notice.text).toMatch(/^Could not read that as an answer: /);
    expect(notice.text).not.toContain('purple sparkles');
    expect((await h.relay.get(card.id)).status).toBe('pending');
  });

  it('a reply that is only a number no option has is refused with the options listed; in quotes it is text', async () => {
    const card = await h.ask({ questions: [{ header: 'Database', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] });
    await h.idle();
    const [message] = cardMessages();
    const reply = fake.reply(ADA, message.message_id, '7');
    const notice = await waitUntil(() => fake.sent.find((m) => m.reply_to_message?.message_id === reply), 'the notice');
    expect(notice.text).toBe(
      'Could not read that as an answer: That is not one of the options of "Database" (1. PostgreSQL, 2. SQLite); give a number from 1 to 2, an option\'s label, or mark your words as text. To send your words as they are, reply with them in quotes.',
    );
    expect((await h.relay.get(card.id)).status).toBe('pending');
    // Nothing typed is repeated: a near miss inside a list is "a part of it".
    const near = fake.reply(ADA, message.message_id, 'SQLit, 2');
    const nearNotice = await waitUntil(() => fake.sent.find((m) => m.reply_to_message?.message_id === near), 'the second notice');
    expect(nearNotice.text).toMatch(/^Could not read that as an answer: A part of it is not one of the options of "Database" .*\(did you mean "SQLite"\?\)/);
    expect(nearNotice.text).not.toContain('"SQLit"');
    fake.reply(ADA, message.message_id, '"7"');
    await waitUntil(async () => (await h.relay.get(card.id)).status === 'answered', 'the quoted reply');
    expect((await h.relay.get(card.id)).answer).toEqual({ q1: { selected: [], text: '"7"' } });
  });

  it('a closing line too long for one message is cut, so Telegram takes the edit', async () => {
    // Two questions of 20 picks of 200 characters: "Answered: …" alone would be over 8,000 characters.
    const labels = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, '0')} ${'x'.repeat(197)}`);
    const question = (id: string) => ({ id, header: id, text: 'Which ones?', options: labels, multiSelect: true });
    const card = await h.ask({ questions: [question('a'), question('b')] });
    await h.idle();
    await h.relay.answer(card.id, { a: { selected: labels }, b: { selected: labels } });
    await h.idle();
    const [message] = cardMessages();
    expect(message.edits).toHaveLength(1);
    expect([...message.text].length).toBeLessThanOrEqual(4096);
    expect(message.text).toMatch(/\nAnswered: a: 00 x+, .*…$/);

    // A late reply is told the answer, cut to one message too.
    const late = fake.reply(ADA, message.message_id, 'a: 1');
    await waitUntil(() => fake.sent.some((m) => m.reply_to_message?.message_id === late) || h.logs.some((l) => l.includes('is too long')), 'the notice');
    const notice = fake.sent.find((m) => m.reply_to_message?.message_id === late)!;
    expect(notice.text).toMatch(/^Already answered: a: 00 x+, .*…$/);
    expect([...notice.text].length).toBeLessThanOrEqual(4096);
  });

  it('the toast after a tap is cut to the 200 characters Telegram takes', async () => {
    const label = `A ${'long '.repeat(38)}label`;
    const card = await h.ask({ questions: [{ text: 'Which?', options: [label, 'Short'] }] });
    await h.idle();
    const [message] = cardMessages();
    fake.tap(ADA, message.message_id, message.reply_markup.inline_keyboard[0][0].callback_data);
    await waitUntil(() => fake.callbackAnswers.length === 1, 'the toast');
    expect((await h.relay.get(card.id)).status).toBe('answered');
    expect(fake.callbackAnswers[0].text).toBe(`Answered: ${label}`.slice(0, 199) + '…');
  });

  it('closes the message once when the card is answered elsewhere, expires or is cancelled', async () => {
    const elsewhere = await h.ask(single);
    const expiring = await h.ask({ ...single, waitSeconds: 60 });
    const cancelled = await h.ask(single);
    await h.idle();
    const [a, b, c] = cardMessages();
    await h.relay.answer(elsewhere.id, { q1: { selected: ['SQLite'] } });
    await h.relay.cancel(cancelled.id);
    await h.advance(61_000);
    expect(a.text.endsWith('Answered: SQLite')).toBe(true);
    expect(b.text.endsWith('Expired')).toBe(true);
    expect(c.text.endsWith('Cancelled')).toBe(true);
    for (const m of [a, b, c]) expect(m.edits).toHaveLength(1);
    // A tap on a closed card changes nothing and says why.
    fake.tap(ADA, b.message_id, `a:${expiring.id}:0`);
    await waitUntil(() => fake.callbackAnswers.length === 1, 'the tap on an expired card');
    expect(fake.callbackAnswers[0].text).toBe('This question expired; nobody is waiting for the answer any more. To answer it anyway, reply to its message (where this chat allows) or use Answer anyway on the relay\'s page.');
  });

  it('a reply to an expired card\'s message is its late answer: kept, told to the person, and a second one is told the first', async () => {
    const card = await h.ask({ ...single, waitSeconds: 60 });
    await h.idle();
    const [message] = cardMessages();
    await h.advance(61_000);
    const reply = fake.reply(ADA, message.message_id, 'sqlite');
    const notice = await waitUntil(() => fake.sent.find((m) => m.reply_to_message?.message_id === reply), 'the notice');
    expect(notice.text).toBe('Kept as a late answer: SQLite. The agent went on without it; it gets it if it still can.');
    expect(await h.relay.get(card.id)).toMatchObject({
      status: 'expired',
      lateAnswer: { answer: { q1: { selected: ['SQLite'] } }, answeredBy: { kind: 'human', id: `telegram:${ADA.id}`, surface: 'telegram' } },
      delivery: { state: 'sent' },
    });
    // Someone who may not answer is refused, late or not.
    const eve = fake.reply(EVE, message.message_id, 'postgresql');
    expect((await waitUntil(() => fake.sent.find((m) => m.reply_to_message?.message_id === eve), 'the refusal')).text).toBe(NOT_AN_ANSWERER);
    const again = fake.reply(ADA, message.message_id, 'postgresql');
    const second = await waitUntil(() => fake.sent.find((m) => m.reply_to_message?.message_id === again), 'the second notice');
    expect(second.text).toBe('This question expired, and was answered late: SQLite.');
    expect((await h.relay.get(card.id)).lateAnswer?.answer).toEqual({ q1: { selected: ['SQLite'] } });
  });

  it('waits exactly as long as a 429 asks before posting', async () => {
    fake.rateLimitNext(30);
    const card = await h.ask(single);
    await h.idle();
    expect(cardMessages()).toHaveLength(0);
    expect(h.logs.join('\n')).toContain('rate limited; the post of card');
    await h.advance(29_000);
    expect(cardMessages()).toHaveLength(0);
    await h.advance(1_000);
    expect(cardMessages()).toHaveLength(1);
    expect(fake.requests.filter((r) => r.method === 'sendMessage')).toHaveLength(2);
    expect(h.store.channels.jobs('telegram')).toEqual([]);
    expect((await h.relay.get(card.id)).status).toBe('pending');
  });

  it('after a 429, goes on in the order the cards came, retrying only the first', async () => {
    fake.rateLimitNext(30);
    const cards = [await h.ask(single), await h.ask({ questions: [{ text: 'Second?' }] }), await h.ask({ questions: [{ text: 'Third?' }] })];
    await h.idle();
    await h.advance(30_000);
    expect(cardMessages().map((m) => h.store.channels.cardOfMessage('telegram', `${CHAT}/${m.message_id}`))).toEqual(cards.map((c) => c.id));
    expect(fake.requests.filter((r) => r.method === 'sendMessage')).toHaveLength(4);
    expect(h.logs.filter((l) => l.includes('rate limited'))).toHaveLength(1);
  });

  it('a closing edit Telegram refuses for good (the message was deleted) is given up once, not at every start', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = cardMessages();
    fake.messages.delete(message.message_id);
    await h.relay.answer(card.id, { q1: { selected: ['SQLite'] } });
    await h.idle();
    expect(h.logs).toEqual([`telegram: gave up on the close of card ${card.id}: editMessageText: Bad Request: message to edit not found`]);
    h = await h.restart();
    await h.idle();
    expect(fake.requests.filter((r) => r.method === 'editMessageText')).toHaveLength(1);
    expect(h.logs).toEqual([]);
  });

  it('an update handled before a restart is not handled again after it', async () => {
    await h.ask({ questions: [{ text: 'Which colours?', options: ['Red', 'Green'], multiSelect: true, freeText: false }] });
    await h.idle();
    const [message] = cardMessages();
    fake.reply(ADA, message.message_id, 'purple');
    await waitUntil(() => fake.sent.length === 2, 'the notice');
    const polls = () => fake.requests.filter((r) => r.method === 'getUpdates').length;
    h = await h.restart();
    const before = polls();
    await waitUntil(() => polls() > before, 'the new poll');
    expect(fake.requests.filter((r) => r.method === 'getUpdates').at(-1)!.body.offset).toBeGreaterThan(0);
    await h.idle();
    expect(fake.sent).toHaveLength(2);
  });

  it('an outage loses nothing: the card is answerable meanwhile, posts and edits arrive once Telegram is back', async () => {
    fake.setDown('refuse');
    const waiting = await h.ask(single);
    const answeredMeanwhile = await h.ask(single);
    await h.idle();
    expect((await h.relay.answer(answeredMeanwhile.id, { q1: { selected: ['SQLite'] } })).status).toBe('answered');
    await h.advance(1_000);
    fake.setDown('error');
    await h.advance(2_000);
    expect(cardMessages()).toHaveLength(0);
    fake.setDown(false);
    await h.advance(4_000);
    // The open card is posted once; the one answered during the outage needs no message.
    expect(cardMessages()).toHaveLength(1);
    expect(h.store.channels.messageOf('telegram', waiting.id)).toBeDefined();
    expect(h.store.channels.jobs('telegram')).toEqual([]);
    // One line when the post starts failing, then one per doubling of the wait (1 s, 2 s; the
    // third failure, waiting 4 s, is not a doubling point and stays quiet).
    const cut = '\\(cannot reach Telegram: request to [^ ]+/sendMessage failed, reason: (socket hang up|read ECONNRESET)\\)';
    const deliver = h.logs.filter((l) => l.includes('cannot deliver'));
    expect(deliver).toHaveLength(2);
    expect(deliver[0]).toMatch(new RegExp(`^telegram: cannot deliver the post of card ${waiting.id} ${cut}; trying again in 1 s$`));
    expect(deliver[1]).toMatch(new RegExp(`^telegram: cannot deliver the post of card ${waiting.id} ${cut}; trying again in 2 s$`));
  });

  it('a listed person answers an approval card, which agents never may', async () => {
    const approval = await h.ask({ kind: 'approval', title: 'Start a session', questions: [{ text: 'Start a claude session?', options: ['Approve', 'Deny'], freeText: false }] });
    await h.idle();
    const [message] = cardMessages();
    expect(message.text.startsWith('Approval needed: Start a session')).toBe(true);
    expect(message.reply_markup.inline_keyboard.map(([b]: any[]) => b.text)).toEqual(['Approve', 'Deny']);
    fake.tap(ADA, message.message_id, message.reply_markup.inline_keyboard[1][0].callback_data);
    await waitUntil(async () => (await h.relay.get(approval.id)).status === 'answered', 'the approval');
    expect((await h.relay.get(approval.id)).answer).toEqual({ q1: { selected: ['Deny'] } });
  });

  it('drops a post Telegram refuses for good (a wrong chat) with a log line, and goes on', async () => {
    await h.stop();
    h = await startChannelHarness({
      id: 'telegram',
      make: telegramChannel,
      config: { telegram: { token: TOKEN, chat: '-999', answerers: ['42'], apiRoot: fake.url } },
    });
    const card = await h.ask(single);
    await h.idle();
    expect(h.store.channels.jobs('telegram')).toEqual([]);
    expect(h.logs).toEqual([`telegram: gave up on the post of card ${card.id}: sendMessage: Bad Request: chat not found`]);
    expect((await h.relay.get(card.id)).status).toBe('pending');
  });

  it('posts at start the open cards it never showed (a channel switched on later, or a crash before the outbox row)', async () => {
    await h.stop(true);
    const store = new SqliteStore(join(h.dataDir, 'askrelay.sqlite'));
    const card = await new Relay({ store: asyncCards(store), waits: { default: 3_600_000 } }).create(single);
    store.close();
    h = await start(h.dataDir);
    await h.idle();
    expect(cardMessages()).toHaveLength(1);
    expect(h.store.channels.messageOf('telegram', card.id)).toBeDefined();
  });

  it('keeps undelivered posts across a restart', async () => {
    fake.setDown('error');
    const card = await h.ask(single);
    await h.idle();
    h = await h.restart();
    expect(h.store.channels.jobs('telegram').map((j) => [j.cardId, j.action])).toEqual([[card.id, 'post']]);
    fake.setDown(false);
    await h.advance(5_000);
    expect(cardMessages()).toHaveLength(1);
    // And a card that closed while the relay was down has its message closed at start.
    const [message] = cardMessages();
    await h.stop(true);
    h = await start(h.dataDir);
    await h.relay.answer(card.id, { q1: { selected: ['PostgreSQL'] } });
    await h.idle();
    expect(message.edits).toHaveLength(1);
    expect(message.text.endsWith('Answered: PostgreSQL')).toBe(true);
  });
});

describe('telegram channel, configured by variables on a running relay', () => {
  let relay: TestRelay;
  // Only the relay polls this bot: stop the harness's channel first.
  beforeEach(() => h.stop(true));
  afterEach(async () => {
    await relay?.stop();
    h = await start(h.dataDir);
  });

  it('posts a card asked over HTTP and takes the answer from a tap', async () => {
    relay = await startTestRelay({
      ASKRELAY_TELEGRAM_TOKEN: TOKEN,
      ASKRELAY_TELEGRAM_CHAT: String(CHAT),
      ASKRELAY_TELEGRAM_ANSWERERS: '42, 43',
      ASKRELAY_TELEGRAM_API_ROOT: fake.url,
    });
    expect(relay.channels.ids).toEqual(['telegram']);
    const created = await (await relay.api('/api/cards', { method: 'POST', json: single })).json();
    const message = await waitUntil(() => cardMessages()[0], 'the post');
    expect(message.reply_markup.inline_keyboard).toHaveLength(3);
    fake.tap(ADA, message.message_id, message.reply_markup.inline_keyboard[1][0].callback_data);
    const card = await waitUntil(async () => {
      const c = await (await relay.api(`/api/cards/${created.id}`)).json();
      return c.status === 'answered' && c;
    }, 'the answer over HTTP');
    expect(card.answeredBy).toEqual({ kind: 'human', id: 'telegram:42', surface: 'telegram' });
    await waitUntil(() => message.edits.length === 1, 'the edit');
    expect(message.text.endsWith('Answered: SQLite')).toBe(true);
  });

  it('askrelay channels shows a channel that cannot deliver, and why; then up to date', async () => {
    fake.setDown('error');
    relay = await startTestRelay({
      ASKRELAY_TELEGRAM_TOKEN: TOKEN,
      ASKRELAY_TELEGRAM_CHAT: String(CHAT),
      ASKRELAY_TELEGRAM_ANSWERERS: '42',
      ASKRELAY_TELEGRAM_API_ROOT: fake.url,
      ASKRELAY_CHANNEL_BACKOFF: '100ms',
    });
    expect((await relay.api('/api/cards', { method: 'POST', json: single })).status).toBe(201);
    const status = await waitUntil(async () => {
      const body = await (await relay.api('/api/channels')).json();
      return body.channels[0].lastError && body.channels[0];
    }, 'a failed attempt');
    expect(status).toMatchObject({ id: 'telegram', describe: 'chat -1001, 1 may answer', queued: 1 });
    expect(status.lastError).toMatch(/^cannot reach Telegram: .*\/bot<token>\/sendMessage/);
    expect(JSON.stringify(status)).not.toContain(TOKEN);
    const env = { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: relay.token };
    const down = await runCli(['channels'], env, relay.dataDir);
    expect(down.code).toBe(0);
    expect(down.stdout).toMatch(/^telegram {3}chat -1001, 1 may answer; 1 waiting \(after \d+ failed attempts?: .+\), next attempt 20\d\d-/);
    expect((await fetch(new URL('/api/channels', relay.url))).status).toBe(401);

    fake.setDown(false);
    await waitUntil(() => cardMessages().length === 1, 'the post once Telegram is back', 60_000);
    await waitUntil(async () => (await (await relay.api('/api/channels')).json()).channels[0].queued === 0, 'an empty outbox');
    const up = await runCli(['channels'], env, relay.dataDir);
    expect(up.stdout).toBe('telegram   chat -1001, 1 may answer; up to date\n');
  });
});
