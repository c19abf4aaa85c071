import { afterEach, describe, expect, it } from 'vitest';
import { startMattermostApi, type MattermostFake } from '../fakes/mattermost-api.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// End to end: `askrelay serve` configured by the documented variables, a card made through
// the HTTP API, its post in (fake) Mattermost, a click that Mattermost turns into a request to
// the relay's public address, and the closing edit; then a thread reply by polling.

const ALICE = 'alice5g7uqj8nfbyr3kx1mzwd9o';

let fake: MattermostFake | undefined;
let relay: TestRelay | undefined;

/** `askrelay serve` with Mattermost on through its documented variables, replies polled every 100 ms. */
const startRelayOn = (mattermost: MattermostFake) =>
  startTestRelay({
    ASKRELAY_MATTERMOST_URL: mattermost.url,
    ASKRELAY_MATTERMOST_TOKEN: mattermost.token,
    ASKRELAY_MATTERMOST_CHANNEL: mattermost.channelId,
    ASKRELAY_MATTERMOST_ANSWERERS: ALICE,
    ASKRELAY_MATTERMOST_POLL: '100ms',
  });

afterEach(async () => {
  await relay?.stop();
  await fake?.close();
  relay = fake = undefined;
});

describe('Mattermost through a running relay', () => {
  it('posts a card made through the API, takes the click and edits the post', async () => {
    fake = await startMattermostApi({ users: { [ALICE]: 'alice' } });
    relay = await startRelayOn(fake);
    const res = await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] } });
    expect(res.status).toBeLessThan(300);
    const card = (await res.json()) as { id: string };

    const post = await waitUntil(() => fake!.cardPosts()[0], 'the card post');
    expect(post.post.props.attachments[0].actions[0].integration.url).toBe(`${relay.url}channels/mattermost/actions`);
    const click = await fake.click({ post: post.post.id, user: ALICE, option: 0 });
    expect(click).toEqual({ status: 200, integration: { status: 200, body: {} } });

    expect(await relay.relay.get(card.id)).toMatchObject({
      status: 'answered',
      answer: { [(await relay.relay.get(card.id)).questions[0].id]: { selected: ['PostgreSQL'] } },
      answeredBy: { kind: 'human', id: `mattermost:${ALICE}`, surface: 'mattermost' },
    });
    await waitUntil(() => post.history.length === 1, 'the closing edit');
    expect(post.post.message).toBe('**Question**\n\nWhich database?\n\nAnswered: PostgreSQL');

    // A text card, answered by a reply in its thread (read by polling on the real clock).
    const colors = await relay.api('/api/cards', {
      method: 'POST',
      json: { questions: [{ text: 'Which colors?', options: ['Red', 'Green', 'Blue'], multiSelect: true }] },
    });
    const second = (await colors.json()) as { id: string };
    const textPost = await waitUntil(() => fake!.cardPosts()[1], 'the second card post');
    fake.reply({ user: ALICE, root: textPost.post.id, message: 'red, blue' });
    await waitUntil(async () => (await relay!.relay.get(second.id)).status === 'answered', 'the reply taken');
    expect(Object.values((await relay.relay.get(second.id)).answer!)).toEqual([{ selected: ['Red', 'Blue'] }]);
    await waitUntil(() => fake!.cardPosts()[1].history.length === 1, 'the second closing edit');
  });

  it('a route sends a card to another channel: posted there, and a reply in its thread there answers it', async () => {
    const OTHER = 'otherchannel0000000000000a';
    fake = await startMattermostApi({ users: { [ALICE]: 'alice' }, otherChannels: [OTHER] });
    relay = await startRelayOn(fake);
    const routes = [{ name: 'ops', match: { labels: { team: 'ops' } }, to: [`mattermost:${OTHER}`] }];
    expect((await relay.api('/api/routes', { method: 'PUT', json: { routes } })).status).toBe(200);
    const res = await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Roll back?', options: ['Yes', 'No'] }], labels: { team: 'ops' } } });
    const card = (await res.json()) as { id: string };
    const post = await waitUntil(() => fake!.cardPosts()[0], 'the card post');
    expect(post.post.channel_id).toBe(OTHER);
    fake.reply({ user: ALICE, root: post.post.id, message: 'No' });
    await waitUntil(async () => (await relay!.relay.get(card.id)).status === 'answered', 'the reply taken');
    expect(Object.values((await relay.relay.get(card.id)).answer!)).toEqual([{ selected: ['No'] }]);
    await waitUntil(() => post.history.length === 1, 'the closing edit');
    expect(fake.cardPosts()).toHaveLength(1);
  });
});
