import { afterEach, expect, it } from 'vitest';
import { deliver, startFakeSlack, type FakeSlack } from '../fakes/slack-api.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// End to end: `askrelay serve` configured by the documented variables, on a real port and
// the real clock, posting to a local Slack; the tap comes back as Slack sends it.

const SECRET = 'e2e-signing-secret';
let fake: FakeSlack | undefined;
let relay: TestRelay | undefined;

afterEach(async () => {
  await relay?.stop();
  await fake?.close();
});

it('a card made through the API is posted to Slack, a signed tap answers it, and the edit arrives', async () => {
  fake = await startFakeSlack();
  relay = await startTestRelay({
    ASKRELAY_SLACK_TOKEN: fake.token,
    ASKRELAY_SLACK_CHANNEL: fake.channelId,
    ASKRELAY_SLACK_ANSWERERS: 'U0ADA, U0BOB',
    ASKRELAY_SLACK_SIGNING_SECRET: SECRET,
    ASKRELAY_SLACK_API_URL: fake.url,
  });
  expect(relay.channels.ids).toEqual(['slack']);
  const res = await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] } });
  expect(res.status).toBe(201);
  const card = await res.json();

  const message = await waitUntil(() => fake!.messages[0], 'the card on Slack');
  expect(message.channel).toBe(fake.channelId);
  const tap = await deliver(`${relay.url}channels/slack/interactions`, SECRET, fake.clickBody(message.ts, 0, 'U0BOB'), Date.now());
  expect(tap.status).toBe(200);

  const answered = await (await relay.api(`/api/cards/${card.id}`)).json();
  expect(answered.status).toBe('answered');
  expect(answered.answer).toEqual({ q1: { selected: ['PostgreSQL'] } });
  expect(answered.answeredBy).toEqual({ kind: 'human', id: 'slack:U0BOB', surface: 'slack' });
  await waitUntil(() => message.edits.length === 1, 'the closing edit');
  expect(message.blocks.at(-1)).toEqual({ type: 'section', text: { type: 'mrkdwn', text: '*Answered: PostgreSQL*' } });
  await relay.channels.idle();
  expect(message.edits).toHaveLength(1);
});
