import { sign } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { discordChannel } from '../../src/channels/discord/index.js';
import { NOT_AN_ANSWERER } from '../../src/channels/inbox.js';
import { startChannelHarness, stopHarnessAndFake, type ChannelHarness } from '../support/channel-harness.js';
import { startTestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';
import {
  buttonPress,
  discordApp,
  modalSubmit,
  pingInteraction,
  sendInteraction,
  startFakeDiscord,
  type DiscordApp,
  type FakeDiscord,
  type FakeDiscordMessage,
} from '../fakes/discord-api.js';

// The Discord channel against a local Discord REST API: @discordjs/rest's real client, a real
// relay core and SQLite file, a fake clock for rate limits and back-offs, and interactions
// signed with a test application's Ed25519 key the way Discord signs them.

const TOKEN = 'MTEwMDAwMDAwMDAwMDAwMDAwMw.fake.bot-token';
const ADA = { id: '200000000000000042', username: 'ada' };
const EVE = { id: '200000000000000066', username: 'eve' };
const single = { questions: [{ header: 'Database', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] };
const DEFERRED_UPDATE = { type: 6 };
const privately = (content: string) => ({ type: 4, data: { content, flags: 64, allowed_mentions: { parse: [] } } });

let fake: FakeDiscord;
let app: DiscordApp;
let h: ChannelHarness;

function start(dataDir?: string) {
  return startChannelHarness({
    id: 'discord',
    make: discordChannel,
    config: { discord: { token: TOKEN, channel: fake.channel, answerers: [ADA.id], publicKey: app.publicKey, apiUrl: fake.url } },
    ...(dataDir ? { dataDir } : {}),
  });
}

const interactions = () => `${h.url}/channels/discord/interactions`;
const send = (interaction: unknown, options?: { badSignature?: boolean; timestamp?: string }) => sendInteraction(interactions(), app, interaction, options);
/** The custom_id of a button on a message, by its label. */
const idOf = (message: FakeDiscordMessage, label: string): string =>
  message.components.flatMap((row: any) => row.components).find((b: any) => b.label === label).custom_id;
const posts = () => fake.requests.filter((r) => r.method === 'POST');

beforeEach(async () => {
  fake = await startFakeDiscord({ token: TOKEN });
  app = discordApp();
  h = await start();
});
afterEach(() => stopHarnessAndFake(h, fake));

describe('discord channel', () => {
  it('posts a single-choice card with buttons; a press answers it and the message is edited once', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = fake.messages;
    const [request] = posts();
    expect(request.path).toBe(`/api/v10/channels/${fake.channel}/messages`);
    expect(request.headers.authorization).toBe(`Bot ${TOKEN}`);
    expect(message.content).toBe('**Question: Database**\n\nWhich database?\n\nTap an option, or use **Reply…** with your own answer.');
    expect(message.components.map((row: any) => row.components.map((b: any) => b.label))).toEqual([['PostgreSQL', 'SQLite'], ['Reply…']]);

    const res = await send(buttonPress(ADA, idOf(message, 'PostgreSQL'), message));
    expect(res).toEqual({ status: 200, body: DEFERRED_UPDATE });
    const answered = await h.relay.get(card.id);
    expect(answered.answer).toEqual({ q1: { selected: ['PostgreSQL'] } });
    expect(answered.answeredBy).toEqual({ kind: 'human', id: `discord:${ADA.id}`, surface: 'discord' });
    await h.idle();
    expect(message.edits).toHaveLength(1);
    expect(message.content).toBe('**Question: Database**\n\nWhich database?\n\n**Answered: PostgreSQL**');
    expect(message.components).toEqual([]);
    const [edit] = fake.requests.filter((r) => r.method === 'PATCH');
    expect(edit.path).toBe(`/api/v10/channels/${fake.channel}/messages/${message.id}`);
  });

  it('answers a PING with a PONG; a bad, missing, mismatched or stale signature is 401 and changes nothing', async () => {
    expect(await send(pingInteraction())).toEqual({ status: 200, body: { type: 1 } });
    // Discord checks the endpoint with deliberately bad signatures and expects 401.
    expect((await send(pingInteraction(), { badSignature: true })).status).toBe(401);

    const card = await h.ask(single);
    await h.idle();
    const [message] = fake.messages;
    const forged = await send(buttonPress(ADA, idOf(message, 'SQLite'), message), { badSignature: true });
    expect(forged).toEqual({ status: 401, body: { error: { code: 'unauthorized', message: expect.any(String) } } });
    const unsigned = await fetch(interactions(), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(buttonPress(ADA, idOf(message, 'SQLite'))) });
    expect(unsigned.status).toBe(401);
    // A signature over other bytes (the body changed in transit) fails too.
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signedBody = JSON.stringify(buttonPress(EVE, idOf(message, 'SQLite')));
    const tampered = JSON.stringify(buttonPress(ADA, idOf(message, 'SQLite')));
    const signature = sign(null, Buffer.from(timestamp + signedBody), app.privateKey).toString('hex');
    const headers = { 'content-type': 'application/json', 'x-signature-ed25519': signature, 'x-signature-timestamp': timestamp };
    expect((await fetch(interactions(), { method: 'POST', headers, body: tampered })).status).toBe(401);
    // A correctly signed press captured ten minutes ago and sent again is a replay: 401.
    const old = String(Math.floor(Date.now() / 1000) - 600);
    const replayed = JSON.stringify(buttonPress(ADA, idOf(message, 'SQLite'), message));
    const oldSignature = sign(null, Buffer.from(old + replayed), app.privateKey).toString('hex');
    const replay = await fetch(interactions(), { method: 'POST', headers: { 'content-type': 'application/json', 'x-signature-ed25519': oldSignature, 'x-signature-timestamp': old }, body: replayed });
    expect(replay.status).toBe(401);
    await h.idle();
    expect((await h.relay.get(card.id)).status).toBe('pending');
    expect(message.edits).toHaveLength(0);
    expect(h.store.audit.list().filter((e) => e.event === 'card.refused')).toEqual([]);
  });

  it('refuses a signed interaction sent a second time (a replay) with 401', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = fake.messages;
    const press = buttonPress(ADA, idOf(message, 'SQLite'), message);
    const timestamp = String(Math.floor(Date.now() / 1000));
    expect(await send(press, { timestamp })).toEqual({ status: 200, body: DEFERRED_UPDATE });
    const replay = await send(press, { timestamp });
    expect(replay).toEqual({ status: 401, body: { error: { code: 'unauthorized', message: 'This signed interaction was already received: a replay is refused.' } } });
    expect((await h.relay.get(card.id)).answer).toEqual({ q1: { selected: ['SQLite'] } });
  });

  it('takes a press from a direct message (user, not member)', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = fake.messages;
    expect(await send(buttonPress({ ...ADA, dm: true }, idOf(message, 'SQLite'), message))).toEqual({ status: 200, body: DEFERRED_UPDATE });
    expect((await h.relay.get(card.id)).answeredBy).toEqual({ kind: 'human', id: `discord:${ADA.id}`, surface: 'discord' });
  });

  it('Reply… opens a modal; the typed answer answers and is not echoed', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = fake.messages;
    const opened = await send(buttonPress(ADA, idOf(message, 'Reply…'), message));
    expect(opened).toEqual({
      status: 200,
      body: {
        type: 9,
        data: {
          custom_id: `askrelay:${card.id}:modal`,
          title: 'Which database?',
          components: [
            {
              type: 18,
              label: 'Your answer',
              component: {
                type: 4,
                custom_id: 'answer',
                style: 2,
                placeholder: "Answer with an option's number or name, or with your own answer.",
                max_length: 4000,
                required: true,
              },
            },
          ],
        },
      },
    });
    expect((await h.relay.get(card.id)).status).toBe('pending');
    const submitted = await send(modalSubmit(ADA, opened.body.data.custom_id, 'MariaDB on port 3307', message));
    expect(submitted).toEqual({ status: 200, body: DEFERRED_UPDATE });
    expect((await h.relay.get(card.id)).answer).toEqual({ q1: { selected: [], text: 'MariaDB on port 3307' } });
    await h.idle();
    expect(message.edits).toHaveLength(1);
    expect(message.content.endsWith('**Answered: a written answer**')).toBe(true);
    expect(fake.requests.some((r) => JSON.stringify(r.body ?? '').includes('MariaDB'))).toBe(false);
  });

  it('multi-select and several questions are answered in the modal, read by the reply parser', async () => {
    const colours = await h.ask({ questions: [{ text: 'Which colours?', options: ['Red', 'Green', 'Blue'], multiSelect: true }] });
    const setup = await h.ask({ questions: [{ id: 'db', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }, { id: 'port', text: 'Which port?' }] });
    await h.idle();
    const [first, second] = fake.messages;
    expect(first.components).toEqual([{ type: 1, components: [{ type: 2, style: 2, label: 'Reply…', custom_id: `askrelay:${colours.id}:reply` }] }]);

    expect(await send(modalSubmit(ADA, `askrelay:${colours.id}:modal`, '1, 3', first))).toEqual({ status: 200, body: DEFERRED_UPDATE });
    // A modal of the older kind (its input in an Action Row) is still read.
    expect(await send(modalSubmit(ADA, `askrelay:${setup.id}:modal`, 'SQLite\n5433', second, 'answer', true))).toEqual({ status: 200, body: DEFERRED_UPDATE });
    expect((await h.relay.get(colours.id)).answer).toEqual({ q1: { selected: ['Red', 'Blue'] } });
    expect((await h.relay.get(setup.id)).answer).toEqual({ db: { selected: ['SQLite'] }, port: { selected: [], text: '5433' } });
    await h.idle();
    expect(first.content.endsWith('**Answered: Red, Blue**')).toBe(true);
    expect(second.content.endsWith('**Answered: db: SQLite; port: a written answer**')).toBe(true);
    expect([first.edits.length, second.edits.length]).toEqual([1, 1]);
  });

  it('an unreadable reply is explained privately and changes nothing', async () => {
    const card = await h.ask({ questions: [{ text: 'Which database?', options: ['PostgreSQL', 'SQLite'], freeText: false }] });
    await h.idle();
    const [message] = fake.messages;
    const res = await send(modalSubmit(ADA, `askrelay:${card.id}:modal`, 'Oracle', message));
    expect(res.body).toMatchObject({ type: 4, data: { flags: 64, content: expect.stringMatching(/^Could not read that as an answer/) } });
    expect(res.body.data.content).not.toContain('Oracle');
    expect((await h.relay.get(card.id)).status).toBe('pending');
  });

  it('a closing line too long for one message is cut, so Discord takes the edit', async () => {
    // 20 picks of 200 characters: "Answered: …" alone would be over 4,000 characters.
    const labels = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, '0')} ${'x'.repeat(197)}`);
    const card = await h.ask({ questions: [{ text: 'Which ones?', options: labels, multiSelect: true }] });
    await h.idle();
    await h.relay.answer(card.id, { q1: { selected: labels } });
    await h.idle();
    const [message] = fake.messages;
    expect(message.edits).toHaveLength(1);
    expect([...message.content].length).toBeLessThanOrEqual(2000);
    expect(message.content).toMatch(/\*\*Answered: 00 x+, 01 x+, .*…\*\*$/);
  });

  it('a card answered elsewhere, expired or cancelled edits its message once', async () => {
    const elsewhere = await h.ask(single);
    const expiring = await h.ask(single);
    const cancelled = await h.ask(single);
    await h.idle();
    const [a, b, c] = fake.messages;
    await h.relay.answer(elsewhere.id, { q1: { selected: ['SQLite'] } });
    await h.relay.cancel(cancelled.id);
    await h.idle();
    await h.advance(Date.parse(expiring.expiresAt) - h.clock.now() + 1);
    expect((await h.relay.get(expiring.id)).status).toBe('expired');
    expect([a.content, b.content, c.content].map((t) => t.split('\n\n').pop())).toEqual(['**Answered: SQLite**', '**Expired**', '**Cancelled**']);
    expect([a.edits.length, b.edits.length, c.edits.length]).toEqual([1, 1, 1]);
    expect([a, b, c].every((m) => m.components.length === 0)).toBe(true);

    // A press on a closed card says so, privately; a modal is not opened for it.
    expect((await send(buttonPress(ADA, `askrelay:${expiring.id}:0`, b))).body).toEqual(
      privately('This question expired; nobody is waiting for the answer any more. To answer it anyway, reply to its message (where this chat allows) or use Answer anyway on the relay\'s page.'),
    );
    expect((await send(buttonPress(ADA, `askrelay:${cancelled.id}:reply`, c))).body).toEqual(privately('This question was cancelled: the agent stopped waiting. To answer it anyway, reply to its message (where this chat allows) or use Answer anyway on the relay\'s page.'));
    expect(fake.messages.every((m) => m.edits.length === 1)).toBe(true);
  });

  it('ignores the same press within a minute; a press after that is told it was answered', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = fake.messages;
    const sqlite = idOf(message, 'SQLite');
    const press = () => send(buttonPress(ADA, sqlite, message));
    expect((await press()).body).toEqual(DEFERRED_UPDATE);
    expect((await press()).body).toEqual(DEFERRED_UPDATE);
    await h.idle();
    expect(message.edits).toHaveLength(1);
    await h.advance(61_000);
    expect((await press()).body).toEqual(privately('Already answered: SQLite.'));
    expect((await h.relay.get(card.id)).answer).toEqual({ q1: { selected: ['SQLite'] } });
    await h.idle();
    expect(message.edits).toHaveLength(1);
  });

  it('refuses a press from someone who may not answer, privately, and changes nothing', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = fake.messages;
    expect((await send(buttonPress(EVE, idOf(message, 'PostgreSQL'), message))).body).toEqual(privately(NOT_AN_ANSWERER));
    expect((await h.relay.get(card.id)).status).toBe('pending');
    const refused = h.store.audit.list().filter((e) => e.event === 'card.refused');
    expect(refused).toMatchObject([{ cardId: card.id, actor: { kind: 'human', id: `discord:${EVE.id}` }, surface: 'discord', detail: { action: 'answer', code: 'not_an_answerer' } }]);
    // Eve's Reply… gets the same refusal instead of a modal, and a forged modal submit too.
    expect((await send(buttonPress(EVE, idOf(message, 'Reply…'), message))).body).toEqual(privately(NOT_AN_ANSWERER));
    expect((await send(modalSubmit(EVE, `askrelay:${card.id}:modal`, 'SQLite', message))).body).toEqual(privately(NOT_AN_ANSWERER));
    // Every refusal is audited: the press, the Reply… and the forged submit.
    expect(h.store.audit.list().filter((e) => e.event === 'card.refused')).toHaveLength(3);
    await h.idle();
    expect((await h.relay.get(card.id)).status).toBe('pending');
    expect(message.edits).toHaveLength(0);
  });

  it('refuses malformed interactions with clear 4xx errors', async () => {
    expect(await send({ type: 'three' })).toMatchObject({ status: 400, body: { error: { code: 'invalid_interaction' } } });
    expect(await send({ type: 2, data: { name: 'ask' }, user: { id: ADA.id } })).toMatchObject({ status: 400, body: { error: { code: 'unsupported_interaction' } } });
    expect((await send(buttonPress(ADA, 'someone-elses-button'))).body).toEqual(privately('That button is not one of askrelay’s questions.'));
    const gone = privately('This question is no longer known to the relay.');
    expect((await send(buttonPress(ADA, 'askrelay:c_ffffffffffffffff:0'))).body).toEqual(gone);
    expect((await send(buttonPress(ADA, 'askrelay:c_ffffffffffffffff:reply'))).body).toEqual(gone);
  });

  it('waits out a 429 for exactly the retry-after Discord sent', async () => {
    fake.rateLimitNext(2);
    await h.ask(single);
    await h.idle();
    expect(fake.messages).toHaveLength(0);
    expect(fake.requests.map((r) => r.method)).toEqual(['POST']);
    await h.advance(1_900);
    expect(fake.messages).toHaveLength(0);
    expect(posts()).toHaveLength(1);
    await h.advance(100);
    expect(fake.messages).toHaveLength(1);
    expect(posts()).toHaveLength(2);
    expect(h.logs.some((l) => /rate limited; the post of card c_\w+ waits 2 s as asked/.test(l))).toBe(true);
  });

  it('a fractional retry_after waits the whole seconds of Retry-After; a global limit pauses the same way', async () => {
    fake.rateLimitNext(1.2, 1, true);
    await h.ask(single);
    await h.idle();
    await h.advance(1_900);
    expect(fake.messages).toHaveLength(0);
    await h.advance(100);
    expect(fake.messages).toHaveLength(1);
  });

  it('an outage loses nothing: cards stay answerable, and posts and edits go out once Discord is back', async () => {
    const before = await h.ask(single);
    await h.idle();
    const [first] = fake.messages;
    await fake.setDown(true);
    const during = await h.ask(single);
    const answeredMeanwhile = await h.ask(single);
    await h.relay.answer(before.id, { q1: { selected: ['PostgreSQL'] } });
    await h.relay.answer(answeredMeanwhile.id, { q1: { selected: ['SQLite'] } });
    await h.idle();
    await h.advance(1_000);
    await h.advance(2_000);
    expect(fake.messages).toHaveLength(1);
    expect(first.edits).toHaveLength(0);
    expect((await h.relay.get(answeredMeanwhile.id)).status).toBe('answered');
    expect(h.logs.some((l) => l.includes('cannot deliver the post of card') && l.includes('503'))).toBe(true);

    await fake.setDown(false);
    await h.advance(4_000);
    expect(fake.messages).toHaveLength(2);
    expect(first.edits).toHaveLength(1);
    expect(first.content.endsWith('**Answered: PostgreSQL**')).toBe(true);
    expect(fake.messages[1].content).toContain('Which database?');
    expect(h.store.channels.messageOf('discord', during.id)).toBeDefined();
    // A card closed before its message could go out needs no message at all.
    expect(h.store.channels.messageOf('discord', answeredMeanwhile.id)).toBeUndefined();
    await h.advance(60_000);
    expect(fake.messages).toHaveLength(2);
  });

  it('refused connections count as an outage too', async () => {
    await fake.setDown('refuse');
    await h.ask(single);
    await h.idle();
    expect(h.logs.some((l) => l.includes('cannot reach Discord'))).toBe(true);
    await fake.setDown(false);
    await h.advance(1_000);
    expect(fake.messages).toHaveLength(1);
  });

  it('an outbox job survives a restart', async () => {
    await fake.setDown(true);
    const card = await h.ask(single);
    await h.idle();
    expect(fake.messages).toHaveLength(0);
    h = await h.restart();
    await fake.setDown(false);
    await h.advance(1_000);
    expect(fake.messages).toHaveLength(1);
    const [message] = fake.messages;
    expect(await send(buttonPress(ADA, idOf(message, 'SQLite'), message))).toEqual({ status: 200, body: DEFERRED_UPDATE });
    await h.idle();
    expect((await h.relay.get(card.id)).status).toBe('answered');
    expect(message.edits).toHaveLength(1);
  });

  it('a message deleted in Discord is given up with a log line, not retried', async () => {
    await h.ask(single);
    await h.idle();
    const [message] = fake.messages;
    fake.deleteMessage(message.id);
    await h.relay.answer((await h.relay.list({ status: 'pending' }))[0].id, { q1: { selected: ['SQLite'] } });
    await h.idle();
    expect(h.logs.some((l) => l.includes('gave up on the close') && l.includes('Unknown Message'))).toBe(true);
    await h.advance(60_000);
    expect(fake.requests.filter((r) => r.method === 'PATCH')).toHaveLength(1);
  });
});

describe('discord channel through askrelay serve', () => {
  it('posts a card made with POST /api/cards; a signed press answers it and the edit arrives', async () => {
    const relay = await startTestRelay({
      ASKRELAY_DISCORD_TOKEN: TOKEN,
      ASKRELAY_DISCORD_CHANNEL: fake.channel,
      ASKRELAY_DISCORD_ANSWERERS: ADA.id,
      ASKRELAY_DISCORD_PUBLIC_KEY: app.publicKey,
      ASKRELAY_DISCORD_API_URL: fake.url,
    });
    try {
      const res = await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] } });
      expect(res.status).toBe(201);
      const card = (await res.json()) as { id: string };
      const message = await waitUntil(() => fake.messages[0], 'the card to be posted');
      const pressed = await sendInteraction(`${relay.url}channels/discord/interactions`, app, buttonPress(ADA, idOf(message, 'PostgreSQL'), message));
      expect(pressed).toEqual({ status: 200, body: DEFERRED_UPDATE });
      const answered = (await (await relay.api(`/api/cards/${card.id}`)).json()) as any;
      expect(answered).toMatchObject({ status: 'answered', answer: { q1: { selected: ['PostgreSQL'] } }, answeredBy: { kind: 'human', id: `discord:${ADA.id}`, surface: 'discord' } });
      await waitUntil(() => message.edits.length === 1, 'the closing edit');
      expect(message.content).toBe('**Question**\n\nWhich database?\n\n**Answered: PostgreSQL**');
    } finally {
      await relay.stop();
    }
  });
});
