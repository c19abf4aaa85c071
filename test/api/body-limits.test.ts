import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discordApp, startFakeDiscord, type FakeDiscord } from '../fakes/discord-api.js';
import { startMattermostApi, type MattermostFake } from '../fakes/mattermost-api.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack-api.js';
import { sendDeclaredLength, sendEndlessBody } from '../support/endless-body.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// Every route that takes a body stops reading at its limit and answers 413 while the
// sender is still sending: a chunked body of any size never sits in the relay's memory.
// A real relay with every chat channel on (against local fakes), raw HTTP clients.

let relay: TestRelay;
let slack: FakeSlack;
let mattermost: MattermostFake;
let discord: FakeDiscord;

beforeAll(async () => {
  [slack, mattermost, discord] = await Promise.all([startFakeSlack(), startMattermostApi(), startFakeDiscord()]);
  relay = await startTestRelay({
    ASKRELAY_SLACK_TOKEN: slack.token,
    ASKRELAY_SLACK_CHANNEL: slack.channelId,
    ASKRELAY_SLACK_ANSWERERS: '*',
    ASKRELAY_SLACK_SIGNING_SECRET: 'limits-secret',
    ASKRELAY_SLACK_API_URL: slack.url,
    ASKRELAY_MATTERMOST_URL: mattermost.url,
    ASKRELAY_MATTERMOST_TOKEN: mattermost.token,
    ASKRELAY_MATTERMOST_CHANNEL: mattermost.channelId,
    ASKRELAY_MATTERMOST_ANSWERERS: '*',
    ASKRELAY_DISCORD_TOKEN: 'limits-bot-token',
    ASKRELAY_DISCORD_CHANNEL: '1100000000000000001',
    ASKRELAY_DISCORD_ANSWERERS: '*',
    ASKRELAY_DISCORD_PUBLIC_KEY: discordApp().publicKey,
    ASKRELAY_DISCORD_API_URL: discord.url,
  });
  expect(relay.channels.ids).toEqual(expect.arrayContaining(['slack', 'mattermost', 'discord']));
});
afterAll(async () => {
  await relay.stop();
  await Promise.all([slack.close(), mattermost.close(), discord.close()]);
});

const bearer = () => ({ authorization: `Bearer ${relay.token}`, 'content-type': 'application/json' });
const mcpHeaders = () => ({ ...bearer(), accept: 'application/json, text/event-stream' });
const json = { 'content-type': 'application/json' };

/** Each route, who may call it, and how it words a refusal. */
const ROUTES: { path: string; headers: () => Record<string, string>; shape: 'relay' | 'json-rpc'; limit: string }[] = [
  { path: 'mcp', headers: mcpHeaders, shape: 'json-rpc', limit: '1 MB' },
  { path: 'mcp/openclaw', headers: mcpHeaders, shape: 'json-rpc', limit: '1 MB' },
  { path: 'channels/slack/interactions', headers: () => ({ 'content-type': 'application/x-www-form-urlencoded' }), shape: 'relay', limit: '1 MB' },
  { path: 'channels/slack/events', headers: () => json, shape: 'relay', limit: '1 MB' },
  { path: 'channels/mattermost/actions', headers: () => json, shape: 'relay', limit: '64 KB' },
  { path: 'channels/discord/interactions', headers: () => json, shape: 'relay', limit: '64 KB' },
  { path: 'api/cards', headers: bearer, shape: 'relay', limit: '64 KB' },
];

function expectTooLarge(route: (typeof ROUTES)[number], body: string) {
  const message = `The body is larger than ${route.limit}.`;
  if (route.shape === 'json-rpc') {
    expect(JSON.parse(body)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message, data: { code: 'body_too_large' } }, id: null });
  } else {
    expect(JSON.parse(body)).toEqual({ error: { code: 'body_too_large', message } });
  }
}

describe.each(ROUTES)('POST /$path', (route) => {
  it('refuses an endless chunked body with 413 while it is still being sent', async () => {
    const outcome = await sendEndlessBody(`${relay.url}${route.path}`, route.headers());
    expect(outcome.status).toBe(413);
    // Answered at the limit, not after reading all 32 MB the client was ready to send.
    expect(outcome.answeredEarly).toBe(true);
    expect(outcome.sent).toBeLessThan(16 * 1024 * 1024);
    expectTooLarge(route, outcome.body);
  });

  it('refuses a declared oversize Content-Length before any byte of the body', async () => {
    const outcome = await sendDeclaredLength(`${relay.url}${route.path}`, route.headers(), 64 * 1024 * 1024);
    expect(outcome.status).toBe(413);
    expectTooLarge(route, outcome.body);
  });
});

it('still answers after the refusals', async () => {
  expect((await fetch(`${relay.url}api/health`)).status).toBe(200);
});
