import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCaptureServer, type CaptureServer } from '../support/capture-server.js';
import { MESSAGE_MAX_RUNES, startMattermostApi, type MattermostFake } from './mattermost-api.js';

// The fake Mattermost pinned to REST API v4's documented wire format, driven by fetch as the
// product drives it (https://developers.mattermost.com/api-documentation/). Errors are
// Mattermost's AppError JSON; the message limit is PostMessageMaxRunesV2 (16,383 runes) from
// server/public/model/post.go; clicks follow https://developers.mattermost.com/integrate/plugins/interactive-messages/

const TOKEN = 'mm-bot-token';
const ADA = 'adaadaadaadaadaadaadaadaad';
const ID = /^[a-z0-9]{26}$/;

let fake: MattermostFake;
let clock: number;
beforeEach(async () => {
  clock = 1_764_504_000_000;
  fake = await startMattermostApi({ token: TOKEN, now: () => clock, users: { [ADA]: 'ada' } });
});
afterEach(() => fake.close());

/** One REST call the way the product makes it; `auth` null sends no Authorization header. */
async function call(method: string, path: string, body?: unknown, auth: string | null = `Bearer ${TOKEN}`) {
  const res = await fetch(`${fake.url}/api/v4${path}`, {
    method,
    headers: { accept: 'application/json', ...(auth ? { authorization: auth } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, headers: res.headers, body: json };
}

/** Mattermost's AppError as a production server sends it (detailed_error wiped). */
const appError = (status: number, id: string, message: string) => ({ id, message, detailed_error: '', request_id: expect.stringMatching(ID), status_code: status });

const action = (n: number, url: string, extra: Record<string, unknown> = {}) => ({ id: `option${n}`, name: `Option ${n}`, type: 'button', integration: { url, context: { option: n } }, ...extra });
const newPost = (message: string, props?: unknown) => ({ channel_id: fake.channelId, message, ...(props ? { props } : {}) });

describe('the fake Mattermost REST API v4, driven by fetch', () => {
  it('answers a missing or wrong token with 401 and the AppError JSON; Bearer and Token schemes both carry the token', async () => {
    const unauthorized = appError(401, 'api.context.session_expired.app_error', 'Invalid or expired session, please login again.');
    const missing = await call('GET', '/users/me', undefined, null);
    expect([missing.status, missing.body]).toEqual([401, unauthorized]);
    expect(missing.headers.get('content-type')).toBe('application/json');
    expect(missing.headers.get('x-request-id')).toMatch(ID);
    expect(missing.headers.get('x-version-id')).toMatch(/^\d+\.\d+\.\d+/);
    const wrong = await call('POST', '/posts', newPost('hi'), 'Bearer not-the-token');
    expect([wrong.status, wrong.body]).toEqual([401, unauthorized]);
    expect(fake.messages).toHaveLength(0);

    expect((await call('GET', '/users/me', undefined, `Token ${TOKEN}`)).body).toMatchObject({ id: fake.botId, username: 'askrelay', is_bot: true });
  });

  it('POST /posts answers 201 with the post object; integrations stay on the server and actions get ids', async () => {
    const url = 'http://relay.example/channels/mattermost/actions';
    const res = await call('POST', '/posts', newPost('**Which database?**', { attachments: [{ text: 'Tap an option.', actions: [action(0, url), action(1, url, { id: '' })] }] }));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(ID),
      create_at: clock,
      update_at: clock,
      edit_at: 0,
      delete_at: 0,
      is_pinned: false,
      user_id: fake.botId,
      channel_id: fake.channelId,
      root_id: '',
      original_id: '',
      message: '**Which database?**',
      type: '',
      props: { attachments: [{ text: 'Tap an option.', actions: [{ id: 'option0', name: 'Option 0', type: 'button' }, { id: expect.stringMatching(ID), name: 'Option 1', type: 'button' }] }] },
      hashtags: '',
      pending_post_id: '',
      reply_count: 0,
      metadata: {},
    });
    // The server keeps what clients never see: where a click goes, with which context.
    expect(fake.messages[0].post.props.attachments[0].actions[0].integration).toEqual({ url, context: { option: 0 } });

    expect(await call('POST', '/posts', { ...newPost('hi'), channel_id: 'elsewhere00000000000000000' })).toMatchObject({
      status: 403,
      body: appError(403, 'api.context.permissions.app_error', 'You do not have the appropriate permissions.'),
    });
    expect((await call('POST', '/posts', 'not json')).body).toEqual(appError(400, 'api.context.invalid_body_param.app_error', 'Invalid or missing post in request body.'));
    const noUrl = await call('POST', '/posts', newPost('x', { attachments: [{ actions: [{ id: 'option0', name: 'A', type: 'button', integration: {} }] }] }));
    expect([noUrl.status, noUrl.body.id]).toEqual([400, 'api.post.create_post.attachment_actions.app_error']);
    expect(fake.messages).toHaveLength(1);
  });

  it('PUT /posts/{id}/patch answers 200 with the post edited; unknown posts are 404 and other people’s 403', async () => {
    const posted = (await call('POST', '/posts', newPost('open', { attachments: [{ text: 'Tap' }] }))).body;
    clock += 1000;
    const res = await call('PUT', `/posts/${posted.id}/patch`, { message: 'closed', props: { attachments: [] } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: posted.id, message: 'closed', props: { attachments: [] }, create_at: posted.create_at, edit_at: clock, update_at: clock });
    expect(fake.messages[0].history).toEqual([{ message: 'open', props: { attachments: [{ text: 'Tap' }] } }]);

    expect(await call('PUT', `/posts/${'x'.repeat(26)}/patch`, { message: 'x' })).toMatchObject({ status: 404, body: appError(404, 'app.post.get.app_error', 'Unable to get the post.') });
    const theirs = fake.say({ user: ADA, message: 'mine' });
    expect((await call('PUT', `/posts/${theirs.id}/patch`, { message: 'x' })).status).toBe(403);
  });

  it('takes a message of 16,383 runes and refuses one more with 400 model.post.is_valid.message_length.app_error, also on a patch', async () => {
    expect(MESSAGE_MAX_RUNES).toBe(16_383);
    const tooLong = appError(400, 'model.post.is_valid.message_length.app_error', 'Post Message property is longer than the maximum permitted length.');
    // Runes, not UTF-16 units: 16,383 emoji fit.
    const posted = await call('POST', '/posts', newPost('😀'.repeat(16_383)));
    expect(posted.status).toBe(201);
    expect(await call('POST', '/posts', newPost('x'.repeat(16_384)))).toMatchObject({ status: 400, body: tooLong });
    expect(await call('PUT', `/posts/${posted.body.id}/patch`, { message: 'x'.repeat(16_384) })).toMatchObject({ status: 400, body: tooLong });
    expect(fake.messages).toHaveLength(1);
    expect(fake.messages[0].history).toEqual([]);
  });

  it('GET /channels/{id}/posts?since= lists posts changed since then, newest first, with the roots of replies', async () => {
    const root = (await call('POST', '/posts', newPost('Which port?'))).body;
    clock += 1000;
    const since = clock;
    clock += 1000;
    const reply = fake.reply({ user: ADA, root: root.id, message: '5432' });
    const res = await call('GET', `/channels/${fake.channelId}/posts?since=${since}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      order: [reply.id],
      posts: { [reply.id]: expect.objectContaining({ root_id: root.id, message: '5432', user_id: ADA }), [root.id]: expect.objectContaining({ reply_count: 1 }) },
      next_post_id: '',
      prev_post_id: '',
      has_next: false,
      first_inaccessible_post_time: 0,
    });
    expect((await call('GET', `/channels/${fake.channelId}/posts?since=${clock}`)).body.order).toEqual([]);
    expect((await call('GET', `/channels/${fake.channelId}/posts?since=soon`)).status).toBe(400);
  });

  it('POST /posts/ephemeral answers 201 with a system_ephemeral post, or 403 without the permission', async () => {
    const res = await call('POST', '/posts/ephemeral', { user_id: ADA, post: { channel_id: fake.channelId, message: 'Only you' } });
    expect([res.status, res.body.type, res.body.message]).toEqual([201, 'system_ephemeral', 'Only you']);
    expect(fake.ephemerals).toEqual([{ user_id: ADA, channel_id: fake.channelId, root_id: '', message: 'Only you', via: 'api' }]);
    fake.forbidEphemeral(true);
    expect((await call('POST', '/posts/ephemeral', { user_id: ADA, post: { channel_id: fake.channelId, message: 'x' } })).status).toBe(403);
  });

  it('answers its rate limiter’s 429 in plain text with Retry-After and X-Ratelimit-*, before authentication', async () => {
    fake.rateLimitNext(3, 2);
    const wrongToken = await call('GET', '/users/me', undefined, 'Bearer not-the-token');
    expect([wrongToken.status, wrongToken.body]).toEqual([429, 'limit exceeded\n']);
    const limited = await call('POST', '/posts', newPost('hi'));
    expect(limited.status).toBe(429);
    expect(['content-type', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'].map((h) => limited.headers.get(h))).toEqual([
      'text/plain; charset=utf-8',
      '3',
      '101',
      '0',
      '3',
    ]);
    expect((await call('POST', '/posts', newPost('hi'))).status).toBe(201);

    // Limited to one endpoint, other calls pass.
    fake.rateLimitNext(1, 1, 'POST /api/v4/posts');
    expect((await call('GET', '/users/me')).status).toBe(200);
    expect((await call('POST', '/posts', newPost('hi'))).status).toBe(429);
  });
});

describe("the fake Mattermost's button clicks", () => {
  let app: CaptureServer;
  let answer: { status: number; body: string };
  beforeEach(async () => {
    answer = { status: 200, body: '{}' };
    app = await startCaptureServer(() => answer);
  });
  afterEach(() => app.close());

  it('POSTs the stored context to the integration URL as a PostActionIntegrationRequest and applies update and ephemeral_text', async () => {
    const url = `${app.url}/channels/mattermost/actions`;
    const posted = (await call('POST', '/posts', newPost('Which?', { attachments: [{ actions: [action(0, url), action(1, url)] }] }))).body;
    answer = { status: 200, body: JSON.stringify({ update: { message: 'Answered: Option 1', props: { attachments: [] } }, ephemeral_text: 'Thanks' }) };
    const result = await fake.click({ post: posted.id, user: ADA, option: 1 });
    expect(result).toEqual({ status: 200, integration: { status: 200, body: JSON.parse(answer.body) } });

    const [request] = app.requests;
    expect([request.method, request.path, request.headers['content-type']]).toEqual(['POST', '/channels/mattermost/actions', 'application/json']);
    expect(JSON.parse(request.raw)).toEqual({
      user_id: ADA,
      user_name: 'ada',
      channel_id: fake.channelId,
      channel_name: 'askrelay',
      team_id: expect.stringMatching(/^[a-z0-9]{26}$/),
      team_domain: 'team',
      post_id: posted.id,
      trigger_id: expect.any(String),
      type: 'button',
      data_source: '',
      context: { option: 1 },
    });
    expect(fake.messages[0].post).toMatchObject({ message: 'Answered: Option 1', props: { attachments: [] } });
    expect(fake.ephemerals).toEqual([{ user_id: ADA, channel_id: fake.channelId, root_id: posted.id, message: 'Thanks', via: 'action' }]);
  });

  it('an integration answering non-200 makes the click fail with 400; an unknown or malformed action id is 404', async () => {
    const url = `${app.url}/actions`;
    const posted = (await call('POST', '/posts', newPost('Which?', { attachments: [{ actions: [action(0, url), action(1, url, { id: 'option_1' })] }] }))).body;
    answer = { status: 401, body: '{"error":"bad signature"}' };
    expect(await fake.click({ post: posted.id, user: ADA, option: 0 })).toEqual({ status: 400, integration: { status: 401, body: { error: 'bad signature' } } });
    expect(await fake.click({ post: posted.id, user: ADA, option: 7 })).toEqual({ status: 404 });
    // Clicks go to /posts/{id}/actions/{action_id:[A-Za-z0-9]+}: an id with "_" never reaches the integration.
    expect(await fake.click({ post: posted.id, user: ADA, actionId: 'option_1' })).toEqual({ status: 404 });
    expect(app.requests).toHaveLength(1);
    expect(fake.messages[0].history).toEqual([]);
  });
});
