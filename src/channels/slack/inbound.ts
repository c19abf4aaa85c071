import { createHmac } from 'node:crypto';
import { sameSecret } from '../../same-secret.js';
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { readLimitedOr } from '../../server/http.js';
import type { ChannelInbox, InboundOutcome } from '../channel.js';
import { SeenSignatures } from '../replay-guard.js';
import type { SlackClient } from './client.js';
import { decodeAction } from './message.js';

// Slack's webhooks: taps on Block Kit buttons (Interactivity Request URL, form-encoded
// `payload=<json>`) and replies in a card's thread (Events API, JSON). Every request must
// carry Slack's signature over the raw body, made within five minutes and never seen before
// (a captured request sent again is a replay); anything else is 401. Slack gives up on a
// request after 3 s and retries events, so the work done here is quick
// (the inbox answers from the relay's store) and notices are not waited for. People are told
// refusals and the like privately, with an ephemeral message only they see.

/** Slack's advice: refuse a request signed more than five minutes away from now (a replay). */
export const MAX_SKEW_SECONDS = 5 * 60;
/** Slack's interaction payloads carry the whole message; far below this. */
export const BODY_LIMIT = 1024 * 1024;

export interface SlackInboundOptions {
  signingSecret: string;
  client: Pick<SlackClient, 'notify'>;
  /** Milliseconds since the epoch (the relay's clock). */
  now: () => number;
}

const InteractionSchema = z.object({ type: z.string() });

const BlockActionsSchema = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: z.string() }),
  channel: z.object({ id: z.string() }).nullish(),
  container: z.object({ channel_id: z.string().optional(), message_ts: z.string().optional() }).optional(),
  actions: z.array(z.object({ action_id: z.string(), value: z.string().optional() })).optional(),
});

// The envelope only: events other than messages (whatever an app is subscribed to) have
// other shapes and must still get their 200, or Slack retries them and may switch events off.
const EventBodySchema = z.object({
  type: z.string(),
  challenge: z.string().optional(),
  event: z.unknown().optional(),
});

const MessageEventSchema = z.object({
  type: z.literal('message'),
  user: z.string().optional(),
  text: z.string().optional(),
  ts: z.string().optional(),
  thread_ts: z.string().optional(),
  channel: z.string().optional(),
  bot_id: z.string().optional(),
  subtype: z.string().optional(),
});

export function slackRoutes(inbox: ChannelInbox, options: SlackInboundOptions): Hono {
  const app = new Hono();
  const seen = new SeenSignatures(MAX_SKEW_SECONDS);

  app.post('/interactions', async (c) => {
    const raw = await signedBody(c, options, seen);
    if (raw instanceof Response) return raw;
    const payload = new URLSearchParams(raw).get('payload');
    if (!payload) return problem(c, 400, 'invalid_request', 'The body has no payload field.');
    // Only button taps are ours; Slack sends other interaction types (shortcuts, modals) here too.
    const kind = parseJson(payload, InteractionSchema);
    if (kind instanceof BadBody) return problem(c, 400, kind.code, `payload: ${kind.message}`);
    if (kind.type !== 'block_actions') return c.body(null, 200);
    const parsed = parseJson(payload, BlockActionsSchema);
    if (parsed instanceof BadBody) return problem(c, 400, parsed.code, `payload: ${parsed.message}`);
    const user = parsed.user.id;
    const channel = parsed.channel?.id ?? parsed.container?.channel_id;
    for (const action of parsed.actions ?? []) {
      const target = decodeAction(action);
      if (!target) continue;
      tell(options, await inbox.tap({ user, cardId: target.cardId, option: target.option }), channel, user);
    }
    return c.body(null, 200);
  });

  app.post('/events', async (c) => {
    const raw = await signedBody(c, options, seen);
    if (raw instanceof Response) return raw;
    const parsed = parseJson(raw, EventBodySchema);
    if (parsed instanceof BadBody) return problem(c, 400, parsed.code, parsed.message);
    if (parsed.type === 'url_verification') return c.json({ challenge: parsed.challenge ?? '' });
    const message = parsed.type === 'event_callback' ? MessageEventSchema.safeParse(parsed.event) : undefined;
    if (message?.success) await onMessage(inbox, options, message.data);
    return c.body(null, 200);
  });

  return app;
}

/** A person's message in a card's thread: the answer, read by the reply parser. */
async function onMessage(inbox: ChannelInbox, options: SlackInboundOptions, event: z.infer<typeof MessageEventSchema>): Promise<void> {
  if (!event.thread_ts || event.thread_ts === event.ts) return;
  // Bots (the relay itself included) and edits, deletions, joins are not answers; a reply
  // also sent to the channel is.
  if (event.bot_id || (event.subtype && event.subtype !== 'thread_broadcast')) return;
  if (!event.user || event.text === undefined) return;
  const cardId = await inbox.cardOfMessage(event.thread_ts);
  if (!cardId) return;
  tell(options, await inbox.reply({ user: event.user, cardId, text: event.text }), event.channel, event.user, event.thread_ts);
}

/** The person's private notice (not awaited: Slack gets its 200 at once); nothing for answered or ignored. */
function tell(options: SlackInboundOptions, outcome: InboundOutcome, channel: string | undefined, user: string, threadTs?: string): void {
  if (outcome.kind === 'answered' || outcome.kind === 'ignored' || !channel) return;
  void options.client.notify(channel, user, outcome.notice, threadTs);
}

/** The raw body when Slack signed it (within five minutes of now, and only once); else the 401 (or 413) to send. */
async function signedBody(c: Context, options: SlackInboundOptions, seen: SeenSignatures): Promise<string | Response> {
  const raw = await readLimitedOr(c.req.raw, BODY_LIMIT, (err) => problem(c, 413, err.code, err.message));
  if (!Buffer.isBuffer(raw)) return raw;
  const timestamp = c.req.header('x-slack-request-timestamp') ?? '';
  const signature = c.req.header('x-slack-signature') ?? '';
  const now = options.now() / 1000;
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(now - Number(timestamp)) > MAX_SKEW_SECONDS) {
    return problem(c, 401, 'unauthorized', 'X-Slack-Request-Timestamp is missing or more than five minutes from now.');
  }
  if (!sameSecret(signature, slackSignature(options.signingSecret, timestamp, raw))) {
    return problem(c, 401, 'unauthorized', 'X-Slack-Signature does not match the body.');
  }
  if (!seen.firstTime(signature, Number(timestamp), now)) {
    return problem(c, 401, 'unauthorized', 'This signed request was already received: a replay is refused.');
  }
  return raw.toString('utf8');
}

/** `v0=` and the hex HMAC-SHA256 of `v0:<timestamp>:<body>` under the app's signing secret. */
export function slackSignature(secret: string, timestamp: string, body: string | Buffer): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:`).update(body).digest('hex')}`;
}

class BadBody {
  constructor(
    readonly code: 'malformed_json' | 'invalid_request',
    readonly message: string,
  ) {}
}

function parseJson<S extends z.ZodType>(text: string, schema: S): z.infer<S> | BadBody {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return new BadBody('malformed_json', `not valid JSON (${(err as Error).message})`);
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  return new BadBody('invalid_request', `${issue.path.join('.') || 'the body'}: ${issue.message}`);
}

function problem(c: Context, status: 400 | 401 | 413, code: string, message: string): Response {
  return c.json({ error: { code, message } }, status);
}
