import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NOT_AN_ANSWERER } from '../../src/channels/inbox.js';
import { slackChannel } from '../../src/channels/slack/index.js';
import { deliver, slackHeaders, startFakeSlack, type FakeSlack } from '../fakes/slack-api.js';
import { startChannelHarness, stopHarnessAndFake, type ChannelHarness } from '../support/channel-harness.js';
import { waitUntil } from '../support/wait-until.js';

// The Slack channel against a local Slack Web API: @slack/web-api's real WebClient, signed
// webhooks on a real HTTP server, a real relay core and SQLite file, and a fake clock for
// rate limits and back-offs.

const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const ADA = 'U0ADA';
const EVE = 'U0EVE';
const single = { questions: [{ header: 'Database', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] };

let fake: FakeSlack;
let h: ChannelHarness;

function start(dataDir?: string) {
  return startChannelHarness({
    id: 'slack',
    make: slackChannel,
    config: { slack: { token: fake.token, channel: fake.channelName, answerers: [ADA], signingSecret: SECRET, apiUrl: fake.url } },
    ...(dataDir ? { dataDir } : {}),
  });
}

/** What Slack does when `user` clicks button `n` of a message: a signed POST to the Interactivity URL. */
const click = (ts: string, n: number, user: string) => deliver(`${h.url}/channels/slack/interactions`, SECRET, fake.clickBody(ts, n, user), h.clock.now());
/** What Slack does when `user` writes in a message's thread: a signed event_callback to the Events URL. */
const replyInThread = (ts: string, user: string, text: string, extra?: Record<string, unknown>) =>
  deliver(`${h.url}/channels/slack/events`, SECRET, fake.threadReplyBody(ts, user, text, extra), h.clock.now());
const posts = () => fake.requests.filter((r) => r.api === 'chat.postMessage');
const buttonsOf = (blocks: any[]) => blocks.filter((b) => b.type === 'actions').flatMap((b) => b.elements.map((e: any) => e.text.text));
const lastLine = (blocks: any[]) => blocks.at(-1).text.text;

beforeEach(async () => {
  fake = await startFakeSlack();
  h = await start();
});
afterEach(() => stopHarnessAndFake(h, fake));

describe('slack channel', () => {
  it('posts a single-choice card with Block Kit buttons, the way @slack/web-api sends it', async () => {
    const card = await h.ask(single);
    await h.idle();
    expect(fake.messages).toHaveLength(1);
    const [message] = fake.messages;
    expect(message.channel).toBe('C0ASKRELAY');
    expect(buttonsOf(message.blocks)).toEqual(['PostgreSQL', 'SQLite']);
    // The WebClient's wire format: a bot token in the header, a form-encoded body with blocks as JSON.
    const [request] = posts();
    expect(request.headers.authorization).toBe(`Bearer ${fake.token}`);
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request.body).toMatchObject({ channel: '#askrelay', text: 'Question: Database\nWhich database?', unfurl_links: 'false' });
    // The ref is what Slack answered: the channel's id and the message's ts.
    expect(h.store.channels.messageOf('slack', card.id)).toEqual({ chat: 'C0ASKRELAY', message: message.ts, closed: false });
  });

  it('a tap from an answerer answers the card, and the message is edited once to "Answered: …"', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = fake.messages;
    const res = await click(message.ts, 0, ADA);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    const answered = await h.relay.get(card.id);
    expect(answered.status).toBe('answered');
    expect(answered.answer).toEqual({ q1: { selected: ['PostgreSQL'] } });
    expect(answered.answeredBy).toEqual({ kind: 'human', id: `slack:${ADA}`, surface: 'slack' });
    await h.idle();
    expect(message.edits).toHaveLength(1);
    expect(buttonsOf(message.blocks)).toEqual([]);
    expect(lastLine(message.blocks)).toBe('*Answered: PostgreSQL*');
    expect(fake.ephemerals).toEqual([]);
    expect(h.store.channels.messageOf('slack', card.id)?.closed).toBe(true);
  });

  it('a reply in the thread answers a multi-select card, read by the reply parser', async () => {
    const card = await h.ask({ questions: [{ text: 'Which colours?', options: ['Red', 'Green', 'Blue'], multiSelect: true }] });
    await h.idle();
    const [message] = fake.messages;
    expect(buttonsOf(message.blocks)).toEqual([]);
    expect((await replyInThread(message.ts, ADA, '1, blue')).status).toBe(200);
    expect((await h.relay.get(card.id)).answer).toEqual({ q1: { selected: ['Red', 'Blue'] } });
    await h.idle();
    expect(message.edits).toHaveLength(1);
    expect(lastLine(message.blocks)).toBe('*Answered: Red, Blue*');
  });

  it('a reply in the thread answers several questions with keyed lines; the typed text is not echoed', async () => {
    const card = await h.ask({
      questions: [
        { id: 'db', header: 'Database', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] },
        { id: 'name', text: 'What is the service called?' },
      ],
    });
    await h.idle();
    const [message] = fake.messages;
    await replyInThread(message.ts, ADA, 'name: ledger-secret-7\ndb: 2');
    expect((await h.relay.get(card.id)).answer).toEqual({ db: { selected: ['SQLite'] }, name: { selected: [], text: 'ledger-secret-7' } });
    await h.idle();
    expect(message.edits).toHaveLength(1);
    expect(lastLine(message.blocks)).toBe('*Answered: Database: SQLite; name: a written answer*');
    expect(JSON.stringify(message.edits)).not.toContain('ledger-secret-7');
  });

  it('ignores bot messages, edits and threads that are not cards', async () => {
    const card = await h.ask({ questions: [{ text: 'Which colours?', options: ['Red', 'Green'], multiSelect: true }] });
    await h.idle();
    const [message] = fake.messages;
    await replyInThread(message.ts, ADA, '1', { bot_id: 'B0OTHER' });
    await replyInThread(message.ts, ADA, '1', { subtype: 'message_changed' });
    await replyInThread('1700000000.000001', ADA, '1');
    // Events of other shapes still get their 200 (or Slack would retry them and switch events off).
    const teamJoin = JSON.stringify({ type: 'event_callback', event: { type: 'team_join', user: { id: 'U0NEW', name: 'new' } } });
    expect((await deliver(`${h.url}/channels/slack/events`, SECRET, teamJoin, h.clock.now())).status).toBe(200);
    expect((await h.relay.get(card.id)).status).toBe('pending');
    expect(fake.ephemerals).toEqual([]);
  });

  it('answers url_verification with the challenge', async () => {
    const body = JSON.stringify({ token: 'unused', challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P', type: 'url_verification' });
    const res = await deliver(`${h.url}/channels/slack/events`, SECRET, body, h.clock.now());
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
  });

  it('closes the message once when the card is answered elsewhere, expires or is cancelled', async () => {
    const elsewhere = await h.ask(single);
    const expiring = await h.ask({ ...single, waitSeconds: 60 });
    const cancelled = await h.ask(single);
    await h.idle();
    const [a, b, c] = fake.messages;
    await h.relay.answer(elsewhere.id, { q1: { selected: ['SQLite'] } });
    await h.relay.cancel(cancelled.id);
    await h.advance(61_000);
    expect((await h.relay.get(expiring.id)).status).toBe('expired');
    await h.advance(60_000);
    expect([a, b, c].map((m) => m.edits.length)).toEqual([1, 1, 1]);
    expect([a, b, c].map((m) => lastLine(m.blocks))).toEqual(['*Answered: SQLite*', '*Expired*', '*Cancelled*']);
    expect([a, b, c].every((m) => buttonsOf(m.blocks).length === 0)).toBe(true);
  });

  it('ignores the same tap within a minute: no notice, no second edit', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = fake.messages;
    // Someone whose Slack still shows the buttons taps PostgreSQL later on.
    const late = fake.clickBody(message.ts, 0, ADA);
    await click(message.ts, 1, ADA);
    await click(message.ts, 1, ADA);
    await h.idle();
    await new Promise((resolve) => setImmediate(resolve));
    expect((await h.relay.get(card.id)).answer).toEqual({ q1: { selected: ['SQLite'] } });
    expect(message.edits).toHaveLength(1);
    expect(fake.ephemerals).toEqual([]);
    // Another button after that: told privately it was already answered.
    await deliver(`${h.url}/channels/slack/interactions`, SECRET, late, h.clock.now());
    await waitUntil(() => fake.ephemerals.length === 1, 'the notice');
    expect(fake.ephemerals[0]).toEqual({ channel: 'C0ASKRELAY', user: ADA, text: 'Already answered: SQLite.' });
    expect(message.edits).toHaveLength(1);
  });

  it('refuses a tap from someone who may not answer, privately and politely; the refusal is audited', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = fake.messages;
    expect((await click(message.ts, 0, EVE)).status).toBe(200);
    await waitUntil(() => fake.ephemerals.length === 1, 'the private notice');
    expect(fake.ephemerals[0]).toEqual({ channel: 'C0ASKRELAY', user: EVE, text: NOT_AN_ANSWERER });
    expect((await h.relay.get(card.id)).status).toBe('pending');
    await h.idle();
    expect(message.edits).toHaveLength(0);
    const refused = h.store.audit.list().filter((e) => e.event === 'card.refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ cardId: card.id, actor: { kind: 'human', id: `slack:${EVE}` }, surface: 'slack', detail: { action: 'answer', code: 'not_an_answerer' } });
  });

  it('a notice too long for Slack (every pick of ten questions) is cut, so Slack takes it', async () => {
    const labels = Array.from({ length: 20 }, (_, i) => `${String(i).padStart(2, '0')} ${'x'.repeat(197)}`);
    const ids = Array.from({ length: 10 }, (_, i) => `q${i}`);
    const card = await h.ask({ questions: ids.map((id) => ({ id, text: 'Which ones?', options: labels, multiSelect: true })) });
    await h.idle();
    await h.relay.answer(card.id, Object.fromEntries(ids.map((id) => [id, { selected: labels }])));
    await h.idle();
    const [message] = fake.messages;
    expect(message.edits).toHaveLength(1);
    // "Already answered: …" with 200 picks of 200 characters is over Slack's 40,000.
    await replyInThread(message.ts, ADA, 'q0: 1');
    await waitUntil(() => fake.ephemerals.length === 1 || h.logs.some((l) => l.includes('could not tell')), 'the notice');
    expect(fake.ephemerals[0].text).toMatch(/^Already answered: q0: 00 x+, .*…$/);
    expect([...fake.ephemerals[0].text].length).toBeLessThanOrEqual(3000);
  });

  it('four questions of 3,500 characters fit Slack\'s total for blocks (12,000 would be refused): texts are cut, the card is posted and closed', async () => {
    const long = (n: number) => `Question ${n}: ${'why '.repeat(870)}`;
    const card = await h.ask({ questions: [1, 2, 3, 4].map((n) => ({ id: `q${n}`, text: long(n), options: ['Yes', 'No'] })) });
    await h.idle();
    const [message] = fake.messages;
    expect(message).toBeDefined();
    const text = (blocks: any[]) => blocks.reduce((n: number, b: any) => n + String(b.text?.text ?? '').length + (b.elements ?? []).reduce((m: number, e: any) => m + String(e.text?.text ?? e.text ?? '').length, 0), 0);
    expect(text(message.blocks)).toBeLessThanOrEqual(11_000);
    expect(JSON.stringify(message.blocks)).toContain('Question 4:');
    await h.relay.skip(card.id);
    await h.idle();
    expect(message.edits).toHaveLength(1);
    expect(text(message.edits[0].blocks)).toBeLessThanOrEqual(11_000);
  });

  it('tells an unreadable thread reply privately, in the thread, without repeating it', async () => {
    const card = await h.ask({ questions: [{ text: 'Which colours?', options: ['Red', 'Green'], multiSelect: true, freeText: false }] });
    await h.idle();
    const [message] = fake.messages;
    await replyInThread(message.ts, ADA, 'purple-hunter2');
    await waitUntil(() => fake.ephemerals.length === 1, 'the notice');
    expect(fake.ephemerals[0]).toMatchObject({ channel: 'C0ASKRELAY', user: ADA, thread_ts: message.ts });
    expect(fake.ephemerals[0].text).toMatch(/^Could not read that as an answer/);
    expect(fake.ephemerals[0].text).not.toContain('purple-hunter2');
    expect((await h.relay.get(card.id)).status).toBe('pending');
  });

  it('a thread reply to an expired card is its late answer, told privately; a second one is told the first', async () => {
    const card = await h.ask({ ...single, waitSeconds: 60 });
    await h.idle();
    const [message] = fake.messages;
    await h.advance(61_000);
    expect((await replyInThread(message.ts, ADA, 'sqlite')).status).toBe(200);
    await waitUntil(() => fake.ephemerals.length === 1, 'the notice');
    expect(fake.ephemerals[0]).toMatchObject({ user: ADA, thread_ts: message.ts, text: 'Kept as a late answer: SQLite. The agent went on without it; it gets it if it still can.' });
    expect(await h.relay.get(card.id)).toMatchObject({
      status: 'expired',
      lateAnswer: { answer: { q1: { selected: ['SQLite'] } }, answeredBy: { kind: 'human', id: `slack:${ADA}`, surface: 'slack' } },
    });
    await replyInThread(message.ts, ADA, 'postgresql');
    await waitUntil(() => fake.ephemerals.length === 2, 'the second notice');
    expect(fake.ephemerals[1].text).toBe('This question expired, and was answered late: SQLite.');
    expect((await h.relay.get(card.id)).lateAnswer?.answer).toEqual({ q1: { selected: ['SQLite'] } });
  });

  it('refuses a bad signature or a stale timestamp with 401, and nothing changes', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = fake.messages;
    const url = `${h.url}/channels/slack/interactions`;
    const body = fake.clickBody(message.ts, 0, ADA);
    const now = Math.floor(h.clock.now() / 1000);
    const wrongSecret = await fetch(url, { method: 'POST', headers: slackHeaders('not-the-secret', body, now, 'application/x-www-form-urlencoded'), body });
    expect(wrongSecret.status).toBe(401);
    expect(await wrongSecret.json()).toEqual({ error: { code: 'unauthorized', message: 'X-Slack-Signature does not match the body.' } });
    const tampered = await fetch(url, { method: 'POST', headers: slackHeaders(SECRET, body, now, 'application/x-www-form-urlencoded'), body: body.replace(ADA, EVE) });
    expect(tampered.status).toBe(401);
    const stale = await fetch(url, { method: 'POST', headers: slackHeaders(SECRET, body, now - 301, 'application/x-www-form-urlencoded'), body });
    expect(stale.status).toBe(401);
    expect((await stale.json()).error.code).toBe('unauthorized');
    const unsigned = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    expect(unsigned.status).toBe(401);
    const event = await fetch(`${h.url}/channels/slack/events`, { method: 'POST', headers: slackHeaders('nope', '{}', now, 'application/json'), body: '{}' });
    expect(event.status).toBe(401);
    await h.idle();
    expect((await h.relay.get(card.id)).status).toBe('pending');
    expect(message.edits).toHaveLength(0);
    expect(fake.ephemerals).toEqual([]);
    // Signed but malformed: a clear 400.
    const malformed = await deliver(url, SECRET, 'payload=%7Bnot-json', h.clock.now());
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error.code).toBe('malformed_json');
  });

  it('refuses a signed request sent a second time (a replay) with 401; Slack’s own re-signed retry still passes', async () => {
    await h.ask(single);
    await h.idle();
    const [message] = fake.messages;
    const url = `${h.url}/channels/slack/interactions`;
    const body = fake.clickBody(message.ts, 0, ADA);
    const headers = slackHeaders(SECRET, body, Math.floor(h.clock.now() / 1000), 'application/x-www-form-urlencoded');
    expect((await fetch(url, { method: 'POST', headers, body })).status).toBe(200);
    const replay = await fetch(url, { method: 'POST', headers, body });
    expect(replay.status).toBe(401);
    expect(await replay.json()).toEqual({ error: { code: 'unauthorized', message: 'This signed request was already received: a replay is refused.' } });
    // The same event replayed to the Events URL is refused the same way.
    const event = fake.threadReplyBody(message.ts, ADA, '2');
    const eventHeaders = slackHeaders(SECRET, event, Math.floor(h.clock.now() / 1000), 'application/json');
    expect((await fetch(`${h.url}/channels/slack/events`, { method: 'POST', headers: eventHeaders, body: event })).status).toBe(200);
    expect((await fetch(`${h.url}/channels/slack/events`, { method: 'POST', headers: eventHeaders, body: event })).status).toBe(401);
    // Slack signs each delivery anew: the same body with a later timestamp is not a replay.
    await h.advance(2000);
    expect((await deliver(url, SECRET, body, h.clock.now())).status).toBe(200);
  });

  it('waits out a 429 for exactly its Retry-After, then posts once', async () => {
    fake.rateLimitNext(30);
    const card = await h.ask(single);
    await h.idle();
    expect(fake.messages).toHaveLength(0);
    expect(posts()).toHaveLength(1);
    await h.advance(29_000);
    expect(fake.messages).toHaveLength(0);
    expect(posts()).toHaveLength(1);
    await h.advance(1_000);
    expect(fake.messages).toHaveLength(1);
    expect(h.store.channels.messageOf('slack', card.id)?.message).toBe(fake.messages[0].ts);
    expect(h.logs.some((line) => line.includes('rate limited') && line.includes('30 s'))).toBe(true);
  });

  it('through an outage the card stays answerable elsewhere, and the edit arrives once Slack is back', async () => {
    const card = await h.ask(single);
    await h.idle();
    const [message] = fake.messages;
    await fake.setDown(true);
    await h.relay.answer(card.id, { q1: { selected: ['SQLite'] } });
    await h.idle();
    expect((await h.relay.get(card.id)).status).toBe('answered');
    await h.advance(1_000);
    await h.advance(2_000);
    expect(message.edits).toHaveLength(0);
    await fake.setDown(false);
    await h.advance(4_000);
    expect(message.edits).toHaveLength(1);
    expect(lastLine(message.blocks)).toBe('*Answered: SQLite*');
    await h.advance(60_000);
    expect(message.edits).toHaveLength(1);
  });

  it('a card asked while Slack refuses connections is posted once when it is back', async () => {
    await fake.setDown('refuse');
    const card = await h.ask(single);
    await h.idle();
    await h.advance(1_000);
    expect(fake.messages).toHaveLength(0);
    await fake.setDown(false);
    await h.advance(2_000);
    expect(fake.messages).toHaveLength(1);
    await h.advance(60_000);
    expect(fake.messages).toHaveLength(1);
    expect((await h.relay.get(card.id)).status).toBe('pending');
  });

  it('an outbox job survives a restart of the relay', async () => {
    await fake.setDown(true);
    const card = await h.ask(single);
    await h.idle();
    expect(fake.messages).toHaveLength(0);
    h = await h.restart();
    await fake.setDown(false);
    await h.advance(1_000);
    expect(fake.messages).toHaveLength(1);
    const [message] = fake.messages;
    await click(message.ts, 0, ADA);
    expect((await h.relay.get(card.id)).answer).toEqual({ q1: { selected: ['PostgreSQL'] } });
    await h.idle();
    expect(message.edits).toHaveLength(1);
  });

  it('a token Slack refuses waits for the operator to fix it; an unknown channel is given up', async () => {
    const revoked = await startChannelHarness({
      id: 'slack',
      make: slackChannel,
      config: { slack: { token: 'xoxb-revoked', channel: fake.channelId, answerers: [ADA], signingSecret: SECRET, apiUrl: fake.url } },
    });
    const unknown = await startChannelHarness({
      id: 'slack',
      make: slackChannel,
      config: { slack: { token: fake.token, channel: 'C0NOSUCH', answerers: [ADA], signingSecret: SECRET, apiUrl: fake.url } },
    });
    try {
      await revoked.ask(single);
      await unknown.ask(single);
      await Promise.all([revoked.idle(), unknown.idle()]);
      expect(revoked.store.channels.jobs('slack')).toMatchObject([{ action: 'post', attempts: 1, lastError: 'chat.postMessage: invalid_auth' }]);
      expect(unknown.store.channels.jobs('slack')).toEqual([]);
      expect(unknown.logs.some((line) => line.includes('gave up') && line.includes('channel_not_found'))).toBe(true);
      expect(fake.messages).toHaveLength(0);
    } finally {
      await revoked.stop();
      await unknown.stop();
    }
  });

  it('gives up on a message Slack no longer has (message_not_found), with a log line', async () => {
    const card = await h.ask(single);
    await h.idle();
    fake.messages.splice(0);
    await h.relay.cancel(card.id);
    await h.idle();
    expect(h.logs.some((line) => line.includes('gave up') && line.includes('message_not_found'))).toBe(true);
    expect(h.store.channels.jobs('slack')).toEqual([]);
  });
});
