import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CardDraft } from '../../src/cards/model.js';
import { ChannelSendError } from '../../src/channels/channel.js';
import { NOT_AN_ANSWERER } from '../../src/channels/inbox.js';
import { MattermostApi } from '../../src/channels/mattermost/client.js';
import { mattermostChannel } from '../../src/channels/mattermost/index.js';
import { startMattermostApi, type MattermostFake, type StoredPost } from '../fakes/mattermost-api.js';
import { startChannelHarness, stopHarnessAndFake, type ChannelHarness } from '../support/channel-harness.js';
import { FakeClock } from '../support/fake-clock.js';
import { waitUntil } from '../support/wait-until.js';

// The Mattermost channel against a wire-faithful fake Mattermost server and a real relay core
// (SQLite, outbox, inbox) on a fake clock.

const ALICE = 'alice5g7uqj8nfbyr3kx1mzwd9o';
const MALLORY = 'mallory3y8w1t6qk9e4r7zcxn5';
const POLL_MS = 2000;

let clock: FakeClock;
let fake: MattermostFake;
let h: ChannelHarness;

const database: CardDraft = { questions: [{ id: 'db', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] };
const colors: CardDraft = { questions: [{ id: 'colors', text: 'Which colors?', options: ['Red', 'Green', 'Blue'], multiSelect: true }] };

beforeEach(async () => {
  clock = new FakeClock(Date.parse('2026-11-30T12:00:00.000Z'));
  fake = await startMattermostApi({ now: () => clock.now(), users: { [ALICE]: 'alice', [MALLORY]: 'mallory' } });
  h = await start();
  // The first poll (users/me, then the channel) runs at start; let it finish before a test counts requests.
  await waitUntil(() => fake.requests.some((r) => r.path.endsWith('/posts') && r.method === 'GET'), 'the first poll');
});

afterEach(() => stopHarnessAndFake(h, fake));

function start(dataDir?: string): Promise<ChannelHarness> {
  return startChannelHarness({
    id: 'mattermost',
    make: mattermostChannel,
    clock,
    ...(dataDir ? { dataDir } : {}),
    config: { mattermost: { token: fake.token, url: fake.url, channel: fake.channelId, answerers: [ALICE], pollMs: POLL_MS } },
  });
}

async function askAndPost(draft: CardDraft) {
  const card = await h.ask(draft);
  await h.idle();
  const post = fake.cardPosts().at(-1)!;
  expect(post).toBeDefined();
  return { card, post };
}

/** Moves the clock poll interval by poll interval until the channel reads the channel once more. */
async function poll(): Promise<void> {
  const polls = () => fake.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/posts')).length;
  const before = polls();
  // A poll still running when the interval comes skips that turn, so one interval may not be enough.
  await waitUntil(async () => {
    if (polls() > before) return true;
    await h.advance(POLL_MS);
    return false;
  }, 'a poll');
}

const edits = (post: StoredPost) => fake.messages.find((m) => m.post.id === post.post.id)!;

describe('Mattermost channel', () => {
  it('posts a single-choice card with buttons whose integration URL reaches the relay', async () => {
    const { card, post } = await askAndPost(database);
    const created = fake.requests.find((r) => r.method === 'POST' && r.path === '/api/v4/posts')!;
    expect(created.headers.authorization).toBe(`Bearer ${fake.token}`);
    expect(post.post.channel_id).toBe(fake.channelId);
    expect(post.post.message).toBe('**Question**\n\nWhich database?');
    const [attachment] = post.post.props.attachments;
    expect(attachment.actions.map((a: any) => [a.id, a.name, a.type])).toEqual([
      ['option0', 'PostgreSQL', 'button'],
      ['option1', 'SQLite', 'button'],
    ]);
    expect(attachment.actions[0].integration.url).toBe(`${h.url}/channels/mattermost/actions`);
    expect(attachment.actions[0].integration.context).toMatchObject({ cardId: card.id, option: 0 });
    expect(h.store.channels.cardOfMessage('mattermost', post.post.id)).toBe(card.id);
  });

  it('answers the card from an allowed user’s click and edits the post exactly once', async () => {
    const { card, post } = await askAndPost(database);
    const click = await fake.click({ post: post.post.id, user: ALICE, option: 1 });
    expect(click).toEqual({ status: 200, integration: { status: 200, body: {} } });
    const answered = await h.relay.get(card.id);
    expect(answered.status).toBe('answered');
    expect(answered.answer).toEqual({ db: { selected: ['SQLite'] } });
    expect(answered.answeredBy).toEqual({ kind: 'human', id: `mattermost:${ALICE}`, surface: 'mattermost' });
    await h.idle();
    expect(edits(post).history).toHaveLength(1);
    expect(edits(post).post.message).toBe('**Question**\n\nWhich database?\n\nAnswered: SQLite');
    expect(edits(post).post.props).toEqual({ attachments: [] });
    expect(fake.ephemerals).toEqual([]);
    await h.advance(60_000);
    expect(edits(post).history).toHaveLength(1);
  });

  it('ignores the same click repeated within a minute: no notice, no second edit', async () => {
    const { post } = await askAndPost(database);
    await fake.click({ post: post.post.id, user: ALICE, option: 0 });
    const again = await fake.click({ post: post.post.id, user: ALICE, option: 0 });
    expect(again).toEqual({ status: 200, integration: { status: 200, body: {} } });
    await h.idle();
    expect(fake.ephemerals).toEqual([]);
    expect(edits(post).history).toHaveLength(1);
  });

  it('refuses a click from someone not among the answerers, privately, and audits it', async () => {
    const { card, post } = await askAndPost(database);
    const click = await fake.click({ post: post.post.id, user: MALLORY, option: 0 });
    expect(click.integration).toEqual({ status: 200, body: { ephemeral_text: NOT_AN_ANSWERER } });
    expect(fake.ephemerals).toEqual([{ user_id: MALLORY, channel_id: fake.channelId, root_id: post.post.id, message: NOT_AN_ANSWERER, via: 'action' }]);
    expect((await h.relay.get(card.id)).status).toBe('pending');
    const refused = await waitUntil(() => h.store.audit.list().find((e) => e.event === 'card.refused'), 'the audit entry');
    expect(refused).toMatchObject({ cardId: card.id, actor: { kind: 'human', id: `mattermost:${MALLORY}` }, surface: 'mattermost', detail: { action: 'answer', code: 'not_an_answerer' } });
    await h.idle();
    expect(edits(post).history).toHaveLength(0);
  });

  it('tells a late clicker privately that the card is closed', async () => {
    const { card, post } = await askAndPost(database);
    await h.relay.answer(card.id, { db: { selected: ['PostgreSQL'] } });
    const click = await fake.click({ post: post.post.id, user: ALICE, option: 1 });
    expect(click.integration?.body).toEqual({ ephemeral_text: 'Already answered: PostgreSQL.' });
    expect((await h.relay.get(card.id)).answer).toEqual({ db: { selected: ['PostgreSQL'] } });
  });

  it('refuses a forged or tampered button with 401 and changes nothing', async () => {
    const { card, post } = await askAndPost(database);
    const real = post.post.props.attachments[0].actions[0].integration.context;
    const send = (body: unknown) =>
      fetch(`${h.url}/channels/mattermost/actions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const base = { user_id: ALICE, user_name: 'alice', channel_id: fake.channelId, post_id: post.post.id, type: 'button' };
    for (const context of [{ ...real, option: 1 }, { ...real, sig: '0'.repeat(64) }, { cardId: card.id, option: 0 }, undefined]) {
      const res = await send({ ...base, context });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String) } });
    }
    const bad = await send('not an action');
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe('invalid_request');
    expect((await h.relay.get(card.id)).status).toBe('pending');
    await h.idle();
    expect(edits(post).history).toHaveLength(0);
  });

  it('refuses a button past its card’s expiry and an hour of grace, with 401, and changes nothing', async () => {
    const { card, post } = await askAndPost(database);
    const context = post.post.props.attachments[0].actions[0].integration.context;
    const click = (user: string) =>
      fetch(`${h.url}/channels/mattermost/actions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user_id: user, channel_id: fake.channelId, post_id: post.post.id, type: 'button', context }),
      });
    // Just after the card expired (the closing edit takes the buttons away, but a stale
    // screen may still show them), the clicker is told so privately.
    await h.advance(Date.parse(card.expiresAt) - h.clock.now() + 1);
    expect((await h.relay.get(card.id)).status).toBe('expired');
    const late = await click(ALICE);
    expect(late.status).toBe(200);
    expect(await late.json()).toEqual({ ephemeral_text: 'This question expired; nobody is waiting for the answer any more. To answer it anyway, reply to its message (where this chat allows) or use Answer anyway on the relay\'s page.' });
    // An hour later the button itself has expired: whoever still holds its context is refused.
    await h.advance(3_600_000);
    const expired = await click(ALICE);
    expect(expired.status).toBe(401);
    expect(await expired.json()).toEqual({ error: { code: 'unauthorized', message: 'This button expired with its question; nothing changed.' } });
    expect((await h.relay.get(card.id)).status).toBe('expired');
    expect((await h.relay.get(card.id)).answer).toBeUndefined();
  });

  it('takes the clicker only from the user_id Mattermost sets, never from the context', async () => {
    const { card, post } = await askAndPost(database);
    const context = post.post.props.attachments[0].actions[0].integration.context;
    const click = (user: string, extra: Record<string, unknown>) =>
      fetch(`${h.url}/channels/mattermost/actions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ user_id: user, channel_id: fake.channelId, post_id: post.post.id, type: 'button', context: { ...context, ...extra } }),
      });
    // Names slipped into the signed context change nothing: the HMAC does not cover them and they are not read.
    const refused = await click(MALLORY, { user_id: ALICE, user: ALICE, user_name: 'alice' });
    expect(await refused.json()).toEqual({ ephemeral_text: NOT_AN_ANSWERER });
    expect((await h.relay.get(card.id)).status).toBe('pending');
    const taken = await click(ALICE, { user_id: MALLORY });
    expect(await taken.json()).toEqual({});
    expect((await h.relay.get(card.id)).answeredBy).toEqual({ kind: 'human', id: `mattermost:${ALICE}`, surface: 'mattermost' });
  });

  it('takes a thread reply to a multi-select card, read by the reply parser', async () => {
    const { card, post } = await askAndPost(colors);
    expect(post.post.props).toEqual({});
    fake.reply({ user: ALICE, root: post.post.id, message: '1, 3' });
    await poll();
    const answered = await waitUntil(async () => {
      const c = await h.relay.get(card.id);
      return c.status === 'answered' ? c : undefined;
    }, 'the answer');
    expect(answered.answer).toEqual({ colors: { selected: ['Red', 'Blue'] } });
    expect(answered.answeredBy).toEqual({ kind: 'human', id: `mattermost:${ALICE}`, surface: 'mattermost' });
    await h.idle();
    expect(edits(post).history).toHaveLength(1);
    expect(edits(post).post.message).toContain('\n\nAnswered: Red, Blue');
    expect(fake.ephemerals).toEqual([]);
  });

  it('takes a thread reply to a card of several questions', async () => {
    const { card, post } = await askAndPost({
      questions: [
        { id: 'db', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] },
        { id: 'cache', text: 'Which cache?', options: ['Redis', 'None'] },
      ],
    });
    fake.reply({ user: ALICE, root: post.post.id, message: 'db: SQLite\ncache: 1' });
    await poll();
    const answered = await waitUntil(async () => {
      const c = await h.relay.get(card.id);
      return c.status === 'answered' ? c : undefined;
    }, 'the answer');
    expect(answered.answer).toEqual({ db: { selected: ['SQLite'] }, cache: { selected: ['Redis'] } });
  });

  it('answers privately, in the thread, a reply it cannot take, and ignores what is not a reply to a card', async () => {
    const { card, post } = await askAndPost({ questions: [{ id: 'colors', text: 'Which colors?', options: ['Red', 'Green'], multiSelect: true, freeText: false }] });
    fake.reply({ user: MALLORY, root: post.post.id, message: '1' });
    fake.reply({ user: fake.botId, root: post.post.id, message: '2' });
    const chat = fake.say({ user: ALICE, message: 'lunch?' });
    fake.reply({ user: ALICE, root: chat.id, message: '1' });
    await poll();
    await waitUntil(() => fake.ephemerals.length >= 1, 'the notice');
    expect(fake.ephemerals[0]).toEqual({ user_id: MALLORY, channel_id: fake.channelId, root_id: post.post.id, message: NOT_AN_ANSWERER, via: 'api' });
    const notice = fake.requests.find((r) => r.path === '/api/v4/posts/ephemeral')!;
    expect(notice.body).toEqual({ user_id: MALLORY, post: { channel_id: fake.channelId, message: NOT_AN_ANSWERER, root_id: post.post.id } });

    fake.reply({ user: ALICE, root: post.post.id, message: 'purple' });
    await poll();
    await waitUntil(() => fake.ephemerals.length >= 2, 'the second notice');
    expect(fake.ephemerals[1].user_id).toBe(ALICE);
    expect(fake.ephemerals[1].message).toMatch(/^Could not read that as an answer/);
    expect(fake.ephemerals[1].message).not.toContain('purple');
    expect((await h.relay.get(card.id)).status).toBe('pending');
    expect(fake.ephemerals).toHaveLength(2);
  });

  it('a thread reply to a cancelled card is its late answer, told privately in the thread', async () => {
    const { card, post } = await askAndPost(colors);
    await h.relay.cancel(card.id);
    fake.reply({ user: ALICE, root: post.post.id, message: 'red' });
    await poll();
    await waitUntil(() => fake.ephemerals.length >= 1, 'the notice');
    expect(fake.ephemerals[0]).toMatchObject({ user_id: ALICE, root_id: post.post.id, message: 'Kept as a late answer: Red. The agent went on without it; it gets it if it still can.' });
    expect(await h.relay.get(card.id)).toMatchObject({
      status: 'cancelled',
      lateAnswer: { answer: { colors: { selected: ['Red'] } }, answeredBy: { kind: 'human', id: `mattermost:${ALICE}`, surface: 'mattermost' } },
    });
  });

  it('logs once when it cannot send a private notice for lack of permission', async () => {
    const { post } = await askAndPost(colors);
    fake.forbidEphemeral(true);
    fake.reply({ user: MALLORY, root: post.post.id, message: '1' });
    await poll();
    const line = `mattermost: could not tell ${MALLORY} privately why their reply changed nothing: POST /posts/ephemeral: 403 You do not have the appropriate permissions. (api.context.permissions.app_error) (the bot needs the create_post_ephemeral permission: make it a system admin)`;
    await waitUntil(() => h.logs.length > 0, 'the log line');
    // Two more polls: the reply was read once, so it is neither tried nor logged again.
    await poll();
    await poll();
    expect(h.logs).toEqual([line]);
    expect(fake.requests.filter((r) => r.method === 'POST' && r.path === '/api/v4/posts/ephemeral')).toHaveLength(1);
  });

  it('keeps polling through outages and rate limits, logging once, and takes replies made meanwhile', async () => {
    const { card, post } = await askAndPost(colors);
    fake.setDown(true);
    await poll();
    await poll();
    await poll();
    await waitUntil(() => h.logs.some((l) => l.includes('cannot read the channel')), 'the log line');
    fake.reply({ user: ALICE, root: post.post.id, message: 'Green' });
    fake.setDown(false);
    fake.rateLimitNext(10, 1, 'GET /api/v4/channels/' + fake.channelId + '/posts');
    await poll();
    await poll();
    const answered = await waitUntil(async () => {
      const c = await h.relay.get(card.id);
      return c.status === 'answered' ? c : undefined;
    }, 'the answer');
    expect(answered.answer).toEqual({ colors: { selected: ['Green'] } });
    expect(h.logs.filter((l) => l.includes('cannot read the channel'))).toHaveLength(1);
    await waitUntil(() => h.logs.some((l) => l.includes('works again')), 'the recovery line');
  });

  it('edits the post once when the card is answered elsewhere, expires or is cancelled', async () => {
    const elsewhere = await askAndPost(database);
    await h.relay.answer(elsewhere.card.id, { db: { selected: ['PostgreSQL'] } });
    const cancelled = await askAndPost({ questions: [{ id: 'q', text: 'Go on?', options: ['Yes', 'No'] }] });
    await h.relay.cancel(cancelled.card.id);
    const expiring = await askAndPost(colors);
    await h.idle();
    await h.advance(3_600_000);
    await h.idle();
    expect((await h.relay.get(expiring.card.id)).status).toBe('expired');
    expect(edits(elsewhere.post).history).toHaveLength(1);
    expect(edits(elsewhere.post).post.message.endsWith('\n\nAnswered: PostgreSQL')).toBe(true);
    expect(edits(cancelled.post).history).toHaveLength(1);
    expect(edits(cancelled.post).post.message.endsWith('\n\nCancelled')).toBe(true);
    expect(edits(expiring.post).history).toHaveLength(1);
    expect(edits(expiring.post).post.message.endsWith('\n\nExpired')).toBe(true);
    expect(fake.requests.filter((r) => r.method === 'PUT')).toHaveLength(3);
  });

  it('waits exactly as long as a 429 asks before posting', async () => {
    fake.rateLimitNext(30, 1, 'POST /api/v4/posts');
    await h.ask(database);
    await h.idle();
    expect(fake.cardPosts()).toHaveLength(0);
    const limited = fake.requests.find((r) => r.method === 'POST' && r.path === '/api/v4/posts');
    expect(limited).toBeDefined();
    expect(h.logs.some((l) => l.includes('rate limited') && l.includes('30 s'))).toBe(true);
    await h.advance(29_999);
    expect(fake.cardPosts()).toHaveLength(0);
    await h.advance(1);
    expect(fake.cardPosts()).toHaveLength(1);
  });

  it('loses no card in an outage: posts once the server is back, and edits once after', async () => {
    fake.setDown('refuse');
    const card = await h.ask(database);
    await h.idle();
    await h.advance(1000);
    expect(fake.cardPosts()).toHaveLength(0);
    fake.setDown(false);
    await h.advance(5000);
    expect(fake.cardPosts()).toHaveLength(1);
    const [post] = fake.cardPosts();

    fake.setDown(true);
    // Answerable on every other surface meanwhile.
    expect((await h.relay.answer(card.id, { db: { selected: ['SQLite'] } })).status).toBe('answered');
    await h.idle();
    await h.advance(1000);
    expect(edits(post).history).toHaveLength(0);
    fake.setDown(false);
    await h.advance(10_000);
    expect(fake.cardPosts()).toHaveLength(1);
    expect(edits(post).history).toHaveLength(1);
    expect(edits(post).post.message.endsWith('Answered: SQLite')).toBe(true);
  });

  it('a thread reply written while the relay was stopped answers after the restart, once', async () => {
    const { card, post } = await askAndPost(colors);
    const answered = await askAndPost(database);
    fake.reply({ user: ALICE, root: answered.post.post.id, message: '2' });
    await poll();
    await waitUntil(async () => (await h.relay.get(answered.card.id)).status === 'answered', 'the first answer');
    await h.stop(true);
    fake.reply({ user: ALICE, root: post.post.id, message: 'Red, Blue' });
    clock.advance(60_000);
    h = await start(h.dataDir);
    await poll();
    await waitUntil(async () => (await h.relay.get(card.id)).status === 'answered', 'the reply made while stopped');
    expect((await h.relay.get(card.id)).answer).toEqual({ colors: { selected: ['Red', 'Blue'] } });
    // The reply read before the restart is not read again (no "Already answered" notice for it).
    expect(fake.requests.filter((r) => r.path.endsWith('/posts/ephemeral'))).toHaveLength(0);
  });

  it('keeps an outbox job across a restart', async () => {
    fake.setDown(true);
    const card = await h.ask(colors);
    await h.idle();
    expect(fake.cardPosts()).toHaveLength(0);
    fake.setDown(false);
    h = await h.restart();
    // The job keeps its due time (the first back-off, 1 s after the failure).
    await h.advance(1000);
    expect(fake.cardPosts()).toHaveLength(1);
    const [post] = fake.cardPosts();
    // The new relay reads the thread too.
    fake.reply({ user: ALICE, root: post.post.id, message: 'Red' });
    await poll();
    await waitUntil(async () => (await h.relay.get(card.id)).status === 'answered', 'the answer');
  });

  it('stops polling when stopped', async () => {
    await h.stop();
    expect(clock.timerCount).toBe(0);
    const before = fake.requests.length;
    clock.advance(10 * POLL_MS);
    expect(fake.requests.length).toBe(before);
    h = await start();
  });
});

describe('Mattermost client', () => {
  it('maps a 429 to rate_limited with Retry-After in ms, 5xx and timeouts to unavailable, 404 to rejected', async () => {
    const api = new MattermostApi(`${fake.url}/`, fake.token, 300);
    fake.rateLimitNext(7);
    await expect(api.me()).rejects.toMatchObject({ kind: 'rate_limited', retryAfterMs: 7000 });
    fake.setDown(true);
    await expect(api.me()).rejects.toMatchObject({ kind: 'unavailable' });
    fake.setDown('hang');
    const hung = await api.me().catch((err: unknown) => err);
    expect(hung).toBeInstanceOf(ChannelSendError);
    expect(hung).toMatchObject({ kind: 'unavailable', message: expect.stringContaining('no answer in 0.3 s') });
    fake.setDown(false);
    await expect(api.patchPost('nosuchpost00000000000000000', { message: 'x', props: { attachments: [] } })).rejects.toMatchObject({
      kind: 'rejected',
      message: expect.stringContaining('Unable to get the post. (app.post.get.app_error)'),
    });
    await expect(new MattermostApi(fake.url, 'wrong').me()).rejects.toMatchObject({ kind: 'unavailable', message: expect.stringContaining('401') });
    expect((await api.me()).id).toBe(fake.botId);
  });
});
