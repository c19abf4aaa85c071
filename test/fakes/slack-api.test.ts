import { ErrorCode, LogLevel, WebClient, type Logger } from '@slack/web-api';
import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCaptureServer, type CaptureServer } from '../support/capture-server.js';
import { deliver, slackHeaders, startFakeSlack, TEXT_MAX_CHARS, type FakeSlack } from './slack-api.js';

// The fake Slack pinned to Slack's documented wire format, driven by @slack/web-api's real
// WebClient (as the product configures it: no retries, rate limits rejected) and raw HTTP
// where the status line matters. Sources: https://docs.slack.dev/reference/methods/chat.postMessage,
// https://docs.slack.dev/reference/methods/chat.update, https://docs.slack.dev/reference/block-kit/blocks,
// https://docs.slack.dev/apis/web-api/rate-limits, https://docs.slack.dev/authentication/verifying-requests-from-slack

const TOKEN = 'xoxb-1234-5678-fake';
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel: () => LogLevel.ERROR, setName() {} };

let fake: FakeSlack;
beforeEach(async () => {
  fake = await startFakeSlack({ token: TOKEN });
});
afterEach(() => fake.close());

/** A WebClient as the product makes it; `null`: no token at all. */
const web = (token: string | null = TOKEN) =>
  new WebClient(token ?? undefined, { slackApiUrl: fake.url, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true, logger: quiet });

/** The WebClient's error for a call, or a failure when the call succeeded. */
async function failure(call: Promise<unknown>): Promise<any> {
  try {
    await call;
  } catch (err) {
    return err;
  }
  throw new Error('the call succeeded');
}

/** A platform error's `error` code (HTTP 200, ok:false). */
const slackError = async (call: Promise<unknown>) => {
  const err = await failure(call);
  expect(err.code).toBe(ErrorCode.PlatformError);
  return err.data.error as string;
};

const raw = (method: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${fake.url}${method}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });

const section = (text: string): any => ({ type: 'section', text: { type: 'mrkdwn', text } });
const button = (i: number, text = `Option ${i}`, value = `v${i}`): any => ({ type: 'button', text: { type: 'plain_text', text }, action_id: `a${i}`, value });

describe('the fake Slack Web API, driven by @slack/web-api', () => {
  it('answers a missing token with not_authed and a wrong one with invalid_auth, both HTTP 200 with ok:false', async () => {
    expect(await slackError(web(null).chat.postMessage({ channel: fake.channelId, text: 'hi' }))).toBe('not_authed');
    expect(await slackError(web('xoxb-wrong').chat.postMessage({ channel: fake.channelId, text: 'hi' }))).toBe('invalid_auth');

    const missing = await raw('chat.postMessage', `channel=${fake.channelId}&text=hi`);
    expect([missing.status, await missing.json()]).toEqual([200, { ok: false, error: 'not_authed' }]);
    const wrong = await raw('chat.postMessage', `channel=${fake.channelId}&text=hi`, { authorization: 'Bearer xoxb-wrong' });
    expect([wrong.status, await wrong.json()]).toEqual([200, { ok: false, error: 'invalid_auth' }]);
    // The token may come as a POST parameter instead of the header.
    const field = await raw('chat.postMessage', `token=${TOKEN}&channel=${fake.channelId}&text=hi`);
    expect((await field.json()).ok).toBe(true);
    expect(fake.messages).toHaveLength(1);
  });

  it('auth.test answers who the token belongs to (team, user, bot), and invalid_auth for a wrong token', async () => {
    expect(await web().auth.test()).toMatchObject({ ok: true, team: 'askrelay test', user: 'askrelay', team_id: 'T0TEAM', user_id: 'U0ASKBOT', bot_id: 'B0ASKBOT' });
    expect(await slackError(web('xoxb-wrong').auth.test())).toBe('invalid_auth');
    const empty = await raw('auth.test', '', { authorization: `Bearer ${TOKEN}` });
    expect((await empty.json()).ok).toBe(true);
  });

  it('chat.postMessage takes a form body with blocks as a JSON string and answers channel, ts and the message', async () => {
    const blocks = [section('*Which database?*'), { type: 'actions', elements: [button(0), button(1)] }];
    const res = await web().chat.postMessage({ channel: fake.channelName, text: 'Which database?', blocks });
    expect(res).toMatchObject({
      ok: true,
      channel: fake.channelId,
      ts: expect.stringMatching(/^\d{10}\.\d{6}$/),
      message: { type: 'message', user: 'U0ASKBOT', bot_id: 'B0ASKBOT', app_id: 'A0ASKRELAY', text: 'Which database?', blocks },
    });
    expect(res.message?.ts).toBe(res.ts);
    const [request] = fake.requests;
    expect(request.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
    expect(request.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(request.body.blocks).toEqual(blocks);
    expect(fake.messages[0]).toMatchObject({ channel: fake.channelId, ts: res.ts, text: 'Which database?', blocks, edits: [] });

    expect(await slackError(web().chat.postMessage({ channel: 'C0ELSEWHERE', text: 'hi' }))).toBe('channel_not_found');
    expect(await slackError(web().chat.postMessage({ channel: fake.channelId } as any))).toBe('no_text');
  });

  it('chat.update replaces text and blocks, keeps the ts, and marks the message edited; an unknown ts is message_not_found', async () => {
    const posted = await web().chat.postMessage({ channel: fake.channelId, text: 'open', blocks: [section('open')] });
    const closed = [section('closed')];
    const res = await web().chat.update({ channel: fake.channelId, ts: posted.ts!, text: 'closed', blocks: closed });
    expect(res).toMatchObject({ ok: true, channel: fake.channelId, ts: posted.ts, text: 'closed', message: { text: 'closed', blocks: closed, edited: { user: 'U0ASKBOT' } } });
    expect(fake.messages[0]).toMatchObject({ ts: posted.ts, text: 'closed', blocks: closed, edits: [{ text: 'closed', blocks: closed }] });
    expect(await slackError(web().chat.update({ channel: fake.channelId, ts: '1700000000.999999', text: 'x' }))).toBe('message_not_found');
  });

  it('chat.postEphemeral answers message_ts and keeps who saw it', async () => {
    const res = await web().chat.postEphemeral({ channel: fake.channelId, user: 'U0ADA', text: 'Only you', thread_ts: '1700000000.000001' });
    expect(res).toMatchObject({ ok: true, message_ts: expect.stringMatching(/^\d{10}\.\d{6}$/) });
    expect(fake.ephemerals).toEqual([{ channel: fake.channelId, user: 'U0ADA', text: 'Only you', thread_ts: '1700000000.000001' }]);
  });

  it('refuses text over 40,000 characters with msg_too_long, on a post, an update and an ephemeral', async () => {
    expect(TEXT_MAX_CHARS).toBe(40_000);
    // Characters, not UTF-16 units: 40,000 emoji fit.
    const posted = await web().chat.postMessage({ channel: fake.channelId, text: '😀'.repeat(40_000) });
    expect(posted.ok).toBe(true);
    const long = 'x'.repeat(40_001);
    expect(await slackError(web().chat.postMessage({ channel: fake.channelId, text: long }))).toBe('msg_too_long');
    expect(await slackError(web().chat.update({ channel: fake.channelId, ts: posted.ts!, text: long }))).toBe('msg_too_long');
    expect(await slackError(web().chat.postEphemeral({ channel: fake.channelId, user: 'U0ADA', text: long }))).toBe('msg_too_long');
    expect(fake.messages).toHaveLength(1);
    expect(fake.messages[0].edits).toEqual([]);
  });

  it("refuses blocks over Block Kit's limits with invalid_blocks and Slack's json-pointer messages", async () => {
    const refused = async (blocks: any[]) => {
      const err = await failure(web().chat.postMessage({ channel: fake.channelId, text: 'fallback', blocks }));
      expect(err.data.error).toBe('invalid_blocks');
      expect(err.data.response_metadata.messages).toEqual(err.data.errors.map((e: string) => `[ERROR] ${e}`));
      return err.data.errors as string[];
    };
    const accepted = async (blocks: any[]) => expect((await web().chat.postMessage({ channel: fake.channelId, text: 'fallback', blocks })).ok).toBe(true);

    await accepted(Array.from({ length: 50 }, (_, i) => section(`${i}`)));
    expect(await refused(Array.from({ length: 51 }, (_, i) => section(`${i}`)))).toEqual(['no more than 50 items allowed [json-pointer:/blocks/]']);
    await accepted([section('s'.repeat(3000))]);
    expect(await refused([section('s'.repeat(3001))])).toEqual(['must be less than 3001 characters [json-pointer:/blocks/0/text/text]']);
    await accepted([{ type: 'header', text: { type: 'plain_text', text: 'h'.repeat(150) } }]);
    expect(await refused([{ type: 'header', text: { type: 'plain_text', text: 'h'.repeat(151) } }])).toEqual([
      'must be less than 151 characters [json-pointer:/blocks/0/text/text]',
    ]);
    expect(await refused([{ type: 'header', text: { type: 'mrkdwn', text: '*h*' } }])).toEqual(['must be plain_text [json-pointer:/blocks/0/text/type]']);
    await accepted([{ type: 'actions', elements: Array.from({ length: 25 }, (_, i) => button(i)) }]);
    expect(await refused([{ type: 'actions', elements: Array.from({ length: 26 }, (_, i) => button(i)) }])).toEqual([
      'no more than 25 items allowed [json-pointer:/blocks/0/elements]',
    ]);
    expect(await refused([{ type: 'actions', elements: [] }])).toEqual(['must provide at least 1 item [json-pointer:/blocks/0/elements]']);
    await accepted([{ type: 'actions', elements: [button(0, 'b'.repeat(75), 'v'.repeat(2000))] }]);
    expect(await refused([{ type: 'actions', elements: [button(0, 'b'.repeat(76), 'v'.repeat(2001))] }])).toEqual([
      'must be less than 76 characters [json-pointer:/blocks/0/elements/0/text/text]',
      'must be less than 2001 characters [json-pointer:/blocks/0/elements/0/value]',
    ]);
    expect(await refused([{ type: 'actions', elements: [button(0), { ...button(1), action_id: 'a0' }] }])).toEqual([
      'action_id already exists [json-pointer:/blocks/0/elements/1/action_id]',
    ]);
    const text = (i: number) => ({ type: 'mrkdwn', text: `${i}` });
    await accepted([{ type: 'context', elements: Array.from({ length: 10 }, (_, i) => text(i)) }]);
    expect(await refused([{ type: 'context', elements: Array.from({ length: 11 }, (_, i) => text(i)) }])).toEqual([
      'no more than 10 items allowed [json-pointer:/blocks/0/elements]',
    ]);

    // chat.update is held to the same limits, and a refused update changes nothing.
    const [first] = fake.messages;
    const err = await failure(web().chat.update({ channel: fake.channelId, ts: first.ts, text: 'x', blocks: [section('s'.repeat(3001))] }));
    expect(err.data.error).toBe('invalid_blocks');
    expect(first.edits).toEqual([]);
  });

  it('refuses a message whose blocks hold more than 12,000 characters in all with msg_blocks_too_long, though each block fits', async () => {
    const four = (size: number) => Array.from({ length: 4 }, () => section('s'.repeat(size)));
    expect((await web().chat.postMessage({ channel: fake.channelId, text: 'fallback', blocks: four(3000) })).ok).toBe(true);
    const err = await failure(web().chat.postMessage({ channel: fake.channelId, text: 'fallback', blocks: [...four(3000), section('one more')] }));
    expect(err.data.error).toBe('msg_blocks_too_long');
    const [first] = fake.messages;
    const edit = await failure(web().chat.update({ channel: fake.channelId, ts: first.ts, text: 'x', blocks: [...four(3000), section('!')] }));
    expect(edit.data.error).toBe('msg_blocks_too_long');
    expect(first.edits).toEqual([]);
  });

  it('answers a rate limit with HTTP 429, Retry-After in seconds and ratelimited; the WebClient rejects with that wait', async () => {
    fake.rateLimitNext(7);
    const err = await failure(web().chat.postMessage({ channel: fake.channelId, text: 'hi' }));
    expect(err.code).toBe(ErrorCode.RateLimitedError);
    expect(err.retryAfter).toBe(7);

    fake.rateLimitNext(3);
    const res = await raw('chat.postMessage', `channel=${fake.channelId}&text=hi`, { authorization: `Bearer ${TOKEN}` });
    expect([res.status, res.headers.get('retry-after'), await res.json()]).toEqual([429, '3', { ok: false, error: 'ratelimited' }]);
    expect(fake.messages).toHaveLength(0);
    // The limit is spent: the next call goes through.
    expect((await web().chat.postMessage({ channel: fake.channelId, text: 'hi' })).ok).toBe(true);
  });

  it('an outage is a 503 HTML page, then a refused connection; the WebClient reports each', async () => {
    await fake.setDown(true);
    const down = await failure(web().chat.postMessage({ channel: fake.channelId, text: 'hi' }));
    expect([down.code, down.statusCode]).toEqual([ErrorCode.HTTPError, 503]);
    await fake.setDown('refuse');
    expect((await failure(web().chat.postMessage({ channel: fake.channelId, text: 'hi' }))).code).toBe(ErrorCode.RequestError);
    await fake.setDown(false);
    expect((await web().chat.postMessage({ channel: fake.channelId, text: 'hi' })).ok).toBe(true);
  });
});

describe("the fake Slack's requests to the app", () => {
  let app: CaptureServer;
  beforeEach(async () => {
    app = await startCaptureServer();
  });
  afterEach(() => app.close());

  it("signs like Slack: v0=HMAC-SHA256(secret, 'v0:' + timestamp + ':' + body), Slack's own worked example", () => {
    // https://docs.slack.dev/authentication/verifying-requests-from-slack
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    expect(slackHeaders('8f742231b10e8888abcd99yyyzzz85a5', body, 1531420618, 'application/x-www-form-urlencoded')).toEqual({
      'content-type': 'application/x-www-form-urlencoded',
      'x-slack-request-timestamp': '1531420618',
      'x-slack-signature': 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
      'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
    });
  });

  it('a button click is a signed, form-encoded block_actions payload naming the button, the message and the clicker', async () => {
    const posted = await web().chat.postMessage({
      channel: fake.channelId,
      text: 'Which database?',
      blocks: [section('Which database?'), { type: 'actions', elements: [button(0, 'PostgreSQL', 'card:0'), button(1, 'SQLite', 'card:1')] }],
    });
    const body = fake.clickBody(posted.ts!, 1, 'U0ADA');
    const now = Date.parse('2026-11-30T12:00:00Z');
    await deliver(`${app.url}/interactions`, 'signing-secret', body, now);

    const [request] = app.requests;
    expect(request.raw).toBe(body);
    expect(request.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(request.headers['x-slack-request-timestamp']).toBe(String(now / 1000));
    const expected = createHmac('sha256', 'signing-secret').update(`v0:${now / 1000}:${request.raw}`).digest('hex');
    expect(request.headers['x-slack-signature']).toBe(`v0=${expected}`);
    const payload = JSON.parse(new URLSearchParams(request.raw).get('payload')!);
    expect(payload).toMatchObject({
      type: 'block_actions',
      user: { id: 'U0ADA' },
      channel: { id: fake.channelId },
      container: { type: 'message', message_ts: posted.ts, channel_id: fake.channelId },
      message: { ts: posted.ts, bot_id: 'B0ASKBOT' },
      actions: [{ type: 'button', action_id: 'a1', block_id: 'blk1', value: 'card:1', text: { type: 'plain_text', text: 'SQLite' } }],
    });
  });

  it('a thread reply is a signed JSON event_callback with the message event in the thread', async () => {
    const posted = await web().chat.postMessage({ channel: fake.channelId, text: 'Which port?' });
    const body = fake.threadReplyBody(posted.ts!, 'U0ADA', '5432');
    await deliver(`${app.url}/events`, 'signing-secret', body, Date.parse('2026-11-30T12:00:00Z'));
    const [request] = app.requests;
    expect(request.headers['content-type']).toBe('application/json');
    expect(JSON.parse(request.raw)).toMatchObject({
      type: 'event_callback',
      event_id: expect.stringMatching(/^Ev/),
      event: { type: 'message', user: 'U0ADA', text: '5432', thread_ts: posted.ts, channel: fake.channelId, ts: expect.stringMatching(/^\d{10}\.\d{6}$/) },
    });
  });
});
