import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listen, readRequest, type LoggedRequest } from './fake-http.js';

// A local Slack: the Web API methods the relay uses (chat.postMessage, chat.update,
// chat.postEphemeral, and auth.test for askrelay doctor) as Slack serves them — POST https://slack.com/api/<method>, a bot token
// in `Authorization: Bearer xoxb-…` (or a `token` field), a form-encoded body whose objects
// (blocks) are JSON strings, or a JSON body; HTTP 200 with `{ok:true, …}` or `{ok:false,
// error}`; 429 with `Retry-After: <seconds>` and `{ok:false, error:"ratelimited"}`. It checks
// the Block Kit limits Slack enforces (answering `invalid_blocks` like Slack does), keeps the
// channel's messages with every edit, and builds what Slack sends the app back: signed
// block_actions payloads for a button click and event_callback bodies for a thread reply.
// Auth errors: https://docs.slack.dev/reference/methods/chat.postMessage (not_authed, invalid_auth);
// auth.test's answer: https://docs.slack.dev/reference/methods/auth.test;
// rate limits: https://docs.slack.dev/apis/web-api/rate-limits; request signing:
// https://docs.slack.dev/authentication/verifying-requests-from-slack

export interface FakeSlackMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: any[];
  /** Every chat.update, in order (text and blocks as sent). */
  edits: { text: string; blocks: any[] }[];
}

export interface FakeEphemeral {
  channel: string;
  user: string;
  text: string;
  thread_ts?: string;
}

export interface FakeSlack {
  /** The Web API base, for `slackApiUrl` (ends with '/'). */
  url: string;
  token: string;
  /** The channel the fake knows: its id, and its name with '#'. */
  channelId: string;
  channelName: string;
  messages: FakeSlackMessage[];
  ephemerals: FakeEphemeral[];
  /** Every request, the body parsed (form fields decoded, JSON fields parsed). */
  requests: (LoggedRequest & { method: string; api: string })[];
  /** The next `n` calls get 429 with `Retry-After: seconds`. */
  rateLimitNext(seconds: number, n?: number): void;
  /** true: every call gets 503; 'refuse': the port stops listening; false: back to normal. */
  setDown(mode: boolean | 'refuse'): Promise<void>;
  /** What Slack POSTs to the Interactivity Request URL when `user` clicks button `actionIndex` of a message. */
  clickBody(ts: string, actionIndex: number, user: string): string;
  /** What Slack POSTs to the Events Request URL when `user` replies `text` in a message's thread. */
  threadReplyBody(threadTs: string, user: string, text: string, extra?: Record<string, unknown>): string;
  close(): Promise<void>;
}

const BOT = { user: 'U0ASKBOT', bot_id: 'B0ASKBOT', app_id: 'A0ASKRELAY', team: 'T0TEAM' };

/**
 * A message's `text`: Slack documents truncating anything over 40,000 characters and lists
 * `msg_too_long` among chat.postMessage's and chat.update's errors; the fake refuses, so a
 * test sees the overflow instead of a silently cut message.
 * https://docs.slack.dev/reference/methods/chat.postMessage (Truncating content; Errors)
 */
export const TEXT_MAX_CHARS = 40_000;

export async function startFakeSlack(options: { token?: string; channelId?: string; channelName?: string } = {}): Promise<FakeSlack> {
  const token = options.token ?? 'xoxb-1234-5678-fake';
  const channelId = options.channelId ?? 'C0ASKRELAY';
  const channelName = options.channelName ?? '#askrelay';
  const messages: FakeSlackMessage[] = [];
  const ephemerals: FakeEphemeral[] = [];
  const requests: FakeSlack['requests'] = [];
  let limited = { seconds: 0, left: 0 };
  let down = false;
  let seq = 0;
  const nextTs = () => `${Math.floor(Date.now() / 1000)}.${String(++seq).padStart(6, '0')}`;

  const server = createServer((req, res) => {
    void handle(req, res).catch((err) => send(res, 500, { ok: false, error: 'fatal_error', detail: String(err) }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const { entry, raw } = await readRequest(req);
    const api = entry.path.replace(/^\/api\//, '');
    const type = String(req.headers['content-type'] ?? '');
    const body = type.startsWith('application/x-www-form-urlencoded') ? formFields(raw) : type.startsWith('application/json') ? entry.body : undefined;
    requests.push({ ...entry, body, api });
    if (down) return send(res, 503, '<html><body>Service Unavailable</body></html>', 'text/html');
    if (limited.left > 0) {
      limited.left--;
      res.setHeader('Retry-After', String(limited.seconds));
      return send(res, 429, { ok: false, error: 'ratelimited' });
    }
    if (req.method !== 'POST' || !entry.path.startsWith('/api/')) return send(res, 404, { ok: false, error: 'unknown_method', req_method: api });
    if (body === undefined || typeof body !== 'object') return send(res, 200, { ok: false, error: 'invalid_form_data' });
    const auth = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1] ?? body.token;
    if (!auth) return send(res, 200, { ok: false, error: 'not_authed' });
    if (auth !== token) return send(res, 200, { ok: false, error: 'invalid_auth' });
    const method = METHODS[api];
    if (!method) return send(res, 404, { ok: false, error: 'unknown_method', req_method: api });
    send(res, 200, method(body));
  }

  const channelOf = (value: unknown) => (value === channelId || value === channelName || value === channelName.slice(1) ? channelId : undefined);

  const METHODS: Record<string, (body: any) => Record<string, unknown>> = {
    'auth.test'() {
      return { ok: true, url: 'https://askrelay-test.slack.com/', team: 'askrelay test', user: 'askrelay', team_id: BOT.team, user_id: BOT.user, bot_id: BOT.bot_id, is_enterprise_install: false };
    },
    'chat.postMessage'(body) {
      const channel = channelOf(body.channel);
      if (!channel) return { ok: false, error: 'channel_not_found' };
      if (!body.text && !body.blocks) return { ok: false, error: 'no_text' };
      if (tooLong(body.text)) return { ok: false, error: 'msg_too_long' };
      const invalid = blockErrors(body.blocks);
      if (invalid.length) return invalidBlocks(invalid);
      if (blocksText(body.blocks) > BLOCKS_TEXT_MAX_CHARS) return { ok: false, error: 'msg_blocks_too_long' };
      const ts = nextTs();
      const message: FakeSlackMessage = { channel, ts, text: body.text ?? '', blocks: body.blocks ?? [], edits: [] };
      messages.push(message);
      return { ok: true, channel, ts, message: botMessage(message) };
    },
    'chat.update'(body) {
      const channel = channelOf(body.channel);
      if (!channel) return { ok: false, error: 'channel_not_found' };
      const message = messages.find((m) => m.channel === channel && m.ts === body.ts);
      if (!message) return { ok: false, error: 'message_not_found' };
      if (!body.text && !body.blocks) return { ok: false, error: 'no_text' };
      if (tooLong(body.text)) return { ok: false, error: 'msg_too_long' };
      const invalid = blockErrors(body.blocks);
      if (invalid.length) return invalidBlocks(invalid);
      if (blocksText(body.blocks) > BLOCKS_TEXT_MAX_CHARS) return { ok: false, error: 'msg_blocks_too_long' };
      message.text = body.text ?? message.text;
      message.blocks = body.blocks ?? message.blocks;
      message.edits.push({ text: body.text ?? '', blocks: body.blocks ?? [] });
      return { ok: true, channel, ts: message.ts, text: message.text, message: { ...botMessage(message), edited: { user: BOT.user, ts: nextTs() } } };
    },
    'chat.postEphemeral'(body) {
      const channel = channelOf(body.channel);
      if (!channel) return { ok: false, error: 'channel_not_found' };
      if (!body.user) return { ok: false, error: 'user_not_in_channel' };
      if (!body.text && !body.blocks) return { ok: false, error: 'no_text' };
      if (tooLong(body.text)) return { ok: false, error: 'msg_too_long' };
      ephemerals.push({ channel, user: body.user, text: body.text, ...(body.thread_ts ? { thread_ts: body.thread_ts } : {}) });
      return { ok: true, message_ts: nextTs() };
    },
  };

  let { base, close } = await listen(server);
  const port = new URL(base).port;

  const fake: FakeSlack = {
    url: `${base}/api/`,
    token,
    channelId,
    channelName,
    messages,
    ephemerals,
    requests,
    rateLimitNext(seconds, n = 1) {
      limited = { seconds, left: n };
    },
    async setDown(mode) {
      if (mode === 'refuse') {
        await close();
        return;
      }
      if (!mode && !server.listening) ({ close } = await listen(server, Number(port)));
      down = mode === true;
    },
    clickBody(ts, actionIndex, user) {
      const message = messages.find((m) => m.ts === ts);
      if (!message) throw new Error(`no message ${ts}`);
      const buttons = message.blocks.flatMap((b: any, i: number) => (b.type === 'actions' ? b.elements.map((e: any) => ({ ...e, block_id: b.block_id ?? `blk${i}` })) : []));
      const button = buttons[actionIndex];
      if (!button) throw new Error(`message ${ts} has no button ${actionIndex}`);
      const payload = {
        type: 'block_actions',
        user: { id: user, username: user.toLowerCase(), name: user.toLowerCase(), team_id: BOT.team },
        api_app_id: BOT.app_id,
        token: 'verification-token-unused',
        container: { type: 'message', message_ts: ts, channel_id: message.channel, is_ephemeral: false },
        trigger_id: `${seq}.1234.abcdef`,
        team: { id: BOT.team, domain: 'askrelay-test' },
        enterprise: null,
        is_enterprise_install: false,
        channel: { id: message.channel, name: channelName.slice(1) },
        message: botMessage(message),
        state: { values: {} },
        response_url: `https://hooks.slack.com/actions/${BOT.team}/1/abc`,
        actions: [{ action_id: button.action_id, block_id: button.block_id, text: button.text, value: button.value, type: 'button', action_ts: `${Math.floor(Date.now() / 1000)}.000100` }],
      };
      return `payload=${encodeURIComponent(JSON.stringify(payload))}`;
    },
    threadReplyBody(threadTs, user, text, extra = {}) {
      const ts = nextTs();
      return JSON.stringify({
        token: 'verification-token-unused',
        team_id: BOT.team,
        api_app_id: BOT.app_id,
        event: { type: 'message', user, text, ts, thread_ts: threadTs, parent_user_id: BOT.user, channel: channelId, event_ts: ts, channel_type: 'channel', ...extra },
        type: 'event_callback',
        event_id: `Ev${seq}`,
        event_time: Math.floor(Date.now() / 1000),
      });
    },
    close: () => (server.listening ? close() : Promise.resolve()),
  };
  return fake;
}

/** Signs a body the way Slack signs its requests to an app. */
export function slackHeaders(secret: string, body: string, timestampSeconds: number, contentType: string): Record<string, string> {
  const timestamp = String(timestampSeconds);
  const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
  return { 'content-type': contentType, 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature, 'user-agent': 'Slackbot 1.0 (+https://api.slack.com/robots)' };
}

/** POSTs a signed body to an app's Slack webhook, as Slack does. */
export function deliver(url: string, secret: string, body: string, timestampMs: number): Promise<Response> {
  const type = body.startsWith('payload=') ? 'application/x-www-form-urlencoded' : 'application/json';
  return fetch(url, { method: 'POST', headers: slackHeaders(secret, body, Math.floor(timestampMs / 1000), type), body });
}

function botMessage(message: FakeSlackMessage) {
  return { user: BOT.user, type: 'message', ts: message.ts, bot_id: BOT.bot_id, app_id: BOT.app_id, text: message.text, team: BOT.team, blocks: message.blocks };
}

/** Form fields; Slack reads object-valued arguments (blocks, attachments, metadata) as JSON strings. */
function formFields(raw: string): Record<string, any> {
  const out: Record<string, any> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    out[key] = ['blocks', 'attachments', 'metadata'].includes(key) ? safeJson(value) : value;
  }
  return out;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * The text all of a message's blocks may hold together: past about 12,000 characters Slack
 * answers `msg_blocks_too_long` (reported by Slack's SDK maintainers; not in its docs).
 */
export const BLOCKS_TEXT_MAX_CHARS = 12_000;

/** Every text a message's blocks hold (headers, sections, buttons, context), in UTF-16 units. */
function blocksText(blocks: unknown): number {
  if (!Array.isArray(blocks)) return 0;
  const len = (t: unknown) => String((t as { text?: unknown } | undefined)?.text ?? '').length;
  return blocks.reduce((sum: number, b: any) => sum + len(b?.text) + (Array.isArray(b?.elements) ? b.elements.reduce((n: number, e: any) => n + (e?.type === 'button' ? len(e.text) : len(e)), 0) : 0), 0);
}

const tooLong = (text: unknown) => typeof text === 'string' && [...text].length > TEXT_MAX_CHARS;

function invalidBlocks(errors: string[]) {
  return { ok: false, error: 'invalid_blocks', errors, response_metadata: { messages: errors.map((e) => `[ERROR] ${e}`) } };
}

/** Block Kit's limits as Slack enforces them, in Slack's wording. */
function blockErrors(blocks: unknown): string[] {
  if (blocks === undefined) return [];
  if (!Array.isArray(blocks)) return ['must provide an array [json-pointer:/blocks]'];
  const errors: string[] = [];
  const at = (path: string) => ` [json-pointer:/blocks/${path}]`;
  // Up to 50 blocks in a message: https://docs.slack.dev/reference/block-kit/blocks
  if (blocks.length > 50) errors.push(`no more than 50 items allowed${at('')}`);
  const actionIds = new Set<string>();
  blocks.forEach((block: any, i: number) => {
    // A section's text: 3,000 characters (https://docs.slack.dev/reference/block-kit/blocks/section-block);
    // a header's: 150 (https://docs.slack.dev/reference/block-kit/blocks/header-block).
    const textLimit = block.type === 'header' ? 150 : 3000;
    if (block.text && String(block.text.text ?? '').length > textLimit) errors.push(`must be less than ${textLimit + 1} characters${at(`${i}/text/text`)}`);
    if (block.type === 'header' && block.text?.type !== 'plain_text') errors.push(`must be plain_text${at(`${i}/text/type`)}`);
    // Up to 25 elements (https://docs.slack.dev/reference/block-kit/blocks/actions-block); a button's
    // text 75 characters, its value 2,000 (https://docs.slack.dev/reference/block-kit/block-elements/button-element).
    if (block.type === 'actions') {
      if (!Array.isArray(block.elements) || block.elements.length === 0) errors.push(`must provide at least 1 item${at(`${i}/elements`)}`);
      else if (block.elements.length > 25) errors.push(`no more than 25 items allowed${at(`${i}/elements`)}`);
      (block.elements ?? []).forEach((e: any, j: number) => {
        if (e.type === 'button' && String(e.text?.text ?? '').length > 75) errors.push(`must be less than 76 characters${at(`${i}/elements/${j}/text/text`)}`);
        if (String(e.value ?? '').length > 2000) errors.push(`must be less than 2001 characters${at(`${i}/elements/${j}/value`)}`);
        if (e.action_id && actionIds.has(e.action_id)) errors.push(`action_id already exists${at(`${i}/elements/${j}/action_id`)}`);
        actionIds.add(e.action_id);
      });
    }
    // Up to 10 elements: https://docs.slack.dev/reference/block-kit/blocks/context-block
    if (block.type === 'context' && (block.elements?.length ?? 0) > 10) errors.push(`no more than 10 items allowed${at(`${i}/elements`)}`);
  });
  return errors;
}

function send(res: ServerResponse, status: number, body: unknown, type = 'application/json; charset=utf-8'): void {
  res.statusCode = status;
  res.setHeader('content-type', type);
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}
