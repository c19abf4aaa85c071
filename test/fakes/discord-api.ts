import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { listen, readRequest, type LoggedRequest } from './fake-http.js';

// A local Discord REST API (https://discord.com/developers/docs/resources/message) for what
// the relay uses: POST /api/v10/channels/{channel}/messages and PATCH …/messages/{id} (and
// GET /api/v10/users/@me, askrelay doctor's check of the token), with
// `Authorization: Bot <token>`, JSON bodies, message objects back, Discord's error bodies
// ({message, code, errors?}) and rate-limit headers. It checks the component limits Discord
// enforces (5 rows of 5 buttons, 80-character labels, 100-character custom_ids, 2000-character
// content). It does not enforce buckets by itself: tests tell it when to answer 429.
// Tests play Discord's other half too: interactions signed with an application key.
// Sources: https://docs.discord.com/developers/resources/message#create-message (content, embeds),
// https://docs.discord.com/developers/components/reference (rows, buttons, custom_id),
// https://docs.discord.com/developers/reference#error-messages (50035's nested `errors`),
// https://docs.discord.com/developers/topics/rate-limits (429 body and headers),
// https://docs.discord.com/developers/interactions/overview (Ed25519 request signatures).

export const FAKE_CHANNEL = '1100000000000000001';
export const FAKE_GUILD = '1100000000000000002';
export const FAKE_APPLICATION = '1100000000000000003';
const BOT_USER = { id: FAKE_APPLICATION, username: 'askrelay', global_name: null, discriminator: '0000', avatar: null, bot: true, public_flags: 0, flags: 0 };
const DISCORD_EPOCH = 1_420_070_400_000n;

export interface FakeDiscordMessage {
  id: string;
  type: 0;
  channel_id: string;
  content: string;
  components: any[];
  embeds: any[];
  author: typeof BOT_USER;
  timestamp: string;
  edited_timestamp: string | null;
  /** Every edit, in order (our own bookkeeping). */
  edits: { content: string; components: any[] }[];
}

let sequence = 0n;
/** A Discord snowflake: milliseconds since Discord's epoch, shifted, plus a counter. */
export function snowflake(): string {
  sequence = (sequence + 1n) & 0xfffn;
  return String(((BigInt(Date.now()) - DISCORD_EPOCH) << 22n) | sequence);
}

export async function startFakeDiscord(options: { token?: string; channels?: string[] } = {}) {
  const token = options.token ?? 'fake-bot-token';
  const channels = new Set(options.channels ?? [FAKE_CHANNEL]);
  const messages = new Map<string, FakeDiscordMessage>();
  const requests: LoggedRequest[] = [];
  let limited: { seconds: number; left: number; global: boolean } | undefined;
  let down: false | 'error' | 'refuse' = false;

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  const bucket = (remaining: number, resetAfter: number) => ({
    'x-ratelimit-limit': '5',
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': (Date.now() / 1000 + resetAfter).toFixed(3),
    'x-ratelimit-reset-after': resetAfter.toFixed(3),
    'x-ratelimit-bucket': 'fake0bucket0messages',
  });
  const invalid = (res: ServerResponse, errors: Record<string, unknown>) =>
    send(res, 400, { message: 'Invalid Form Body', code: 50035, errors });

  const handler = async (req: import('node:http').IncomingMessage, res: ServerResponse) => {
    const { entry, body, bodyIsJson } = await readRequest(req);
    requests.push(entry);
    if (down === 'error') {
      return void res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream connect error or disconnect/reset before headers. reset reason: overflow');
    }
    if (req.headers.authorization !== `Bot ${token}`) return send(res, 401, { message: '401: Unauthorized', code: 0 });
    // https://docs.discord.com/developers/resources/user#get-current-user (@discordjs/rest sends the @ as %40)
    if (entry.method === 'GET' && decodeURIComponent(entry.path) === '/api/v10/users/@me') return send(res, 200, BOT_USER);
    const match = /^\/api\/v10\/channels\/(\d+)\/messages(?:\/(\d+))?$/.exec(entry.path);
    if (!match || !['POST', 'PATCH', 'GET'].includes(entry.method)) return send(res, 404, { message: '404: Not Found', code: 0 });
    const [, channel, id] = match;
    if (limited && limited.left > 0) {
      limited.left--;
      const { seconds, global } = limited;
      const headers: Record<string, string> = global
        ? { 'retry-after': String(Math.ceil(seconds)), 'x-ratelimit-global': 'true', 'x-ratelimit-scope': 'global' }
        : { 'retry-after': String(Math.ceil(seconds)), ...bucket(0, seconds), 'x-ratelimit-scope': 'user' };
      return send(res, 429, { message: 'You are being rate limited.', retry_after: seconds, global }, headers);
    }
    if (!channels.has(channel)) return send(res, 404, { message: 'Unknown Channel', code: 10003 });
    if (entry.method !== 'GET' && (!bodyIsJson || !req.headers['content-type']?.startsWith('application/json'))) {
      return send(res, 400, { message: 'Cannot send an empty message', code: 50006 });
    }

    if (entry.method === 'POST' && !id) {
      const problems = checkBody(body);
      if (problems) return invalid(res, problems);
      if (!body.content && !body.components?.length && !body.embeds?.length) return send(res, 400, { message: 'Cannot send an empty message', code: 50006 });
      const message: FakeDiscordMessage = {
        id: snowflake(),
        type: 0,
        channel_id: channel,
        content: body.content ?? '',
        components: body.components ?? [],
        embeds: body.embeds ?? [],
        author: BOT_USER,
        timestamp: new Date().toISOString(),
        edited_timestamp: null,
        edits: [],
      };
      messages.set(message.id, message);
      return send(res, 200, wire(message), bucket(4, 5));
    }
    const message = id ? messages.get(id) : undefined;
    if (!message || message.channel_id !== channel) return send(res, 404, { message: 'Unknown Message', code: 10008 });
    if (entry.method === 'GET') return send(res, 200, wire(message), bucket(4, 5));
    if (entry.method !== 'PATCH') return send(res, 405, { message: '405: Method Not Allowed', code: 0 });
    const problems = checkBody(body);
    if (problems) return invalid(res, problems);
    if (body.content !== undefined) message.content = body.content ?? '';
    if (body.components !== undefined) message.components = body.components ?? [];
    if (body.embeds !== undefined) message.embeds = body.embeds ?? [];
    message.edited_timestamp = new Date().toISOString();
    message.edits.push({ content: message.content, components: message.components });
    return send(res, 200, wire(message), bucket(4, 5));
  };

  let server: Server = createServer(handler);
  let { base, close } = await listen(server);
  const port = Number(new URL(base).port);

  return {
    /** The API base to configure (apiUrl / ASKRELAY_DISCORD_API_URL); the client adds /v10. */
    url: `${base}/api`,
    token,
    channel: [...channels][0],
    /** Posted messages in order. */
    get messages(): FakeDiscordMessage[] {
      return [...messages.values()];
    },
    requests,
    /** Someone deleted the message in Discord: later edits get 404 Unknown Message. */
    deleteMessage(id: string) {
      messages.delete(id);
    },
    /** The next `n` requests (default 1) answer 429 with Discord's headers and body. */
    rateLimitNext(seconds: number, n = 1, global = false) {
      limited = { seconds, left: n, global };
    },
    /** true: 503 from Discord's edge; 'refuse': nothing listens on the port; false: back. */
    async setDown(state: boolean | 'refuse') {
      const next = state === true ? 'error' : state;
      if (down === 'refuse' && next !== 'refuse') {
        server = createServer(handler);
        ({ close } = await listen(server, port));
      } else if (next === 'refuse' && down !== 'refuse') {
        await close();
      }
      down = next;
    },
    close: () => (down === 'refuse' ? Promise.resolve() : close()),
  };
}

export type FakeDiscord = Awaited<ReturnType<typeof startFakeDiscord>>;

/** The message as Discord returns it (without our edit log). */
function wire(message: FakeDiscordMessage) {
  const { edits: _edits, ...rest } = message;
  return {
    ...rest,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    pinned: false,
    flags: 0,
    application_id: FAKE_APPLICATION,
  };
}

/** Discord's form-body checks for what the relay sends; errors in Discord's nested shape. */
function checkBody(body: any): Record<string, unknown> | undefined {
  const error = (code: string, message: string) => ({ _errors: [{ code, message }] });
  // Content: up to 2,000 characters (create-message above).
  if (typeof body?.content === 'string' && [...body.content].length > 2000) {
    return { content: error('BASE_TYPE_MAX_LENGTH', 'Must be 2000 or fewer in length.') };
  }
  // Up to 10 embeds, and 6,000 characters across all of their texts together:
  // https://docs.discord.com/developers/resources/message#embed-object-embed-limits
  const embeds = body?.embeds;
  if (embeds !== undefined && embeds !== null) {
    if (!Array.isArray(embeds) || embeds.length > 10) return { embeds: error('BASE_TYPE_MAX_LENGTH', 'Must be 10 or fewer in length.') };
    if (embeds.reduce((n: number, e: any) => n + embedChars(e), 0) > 6000) return { embeds: error('MAX_EMBED_SIZE_EXCEEDED', 'Embed size exceeds maximum size of 6000') };
  }
  // Up to 5 action rows of up to 5 buttons; a label up to 80 characters, a custom_id 1 to 100.
  const rows = body?.components;
  if (rows === undefined || rows === null) return undefined;
  if (!Array.isArray(rows) || rows.length > 5) return { components: error('BASE_TYPE_BAD_LENGTH', 'Must be between 0 and 5 in length.') };
  const ids = new Set<string>();
  for (const [r, row] of rows.entries()) {
    if (row?.type !== 1 || !Array.isArray(row.components) || row.components.length < 1 || row.components.length > 5) {
      return { components: { [r]: { components: error('BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 5 in length.') } } };
    }
    for (const [b, button] of row.components.entries()) {
      const at = (field: string, code: string, message: string) => ({ components: { [r]: { components: { [b]: { [field]: error(code, message) } } } } });
      if (button?.type !== 2 || ![1, 2, 3, 4].includes(button.style)) return at('type', 'UNION_TYPE_CHOICES', 'Value of field "type" must be one of (2,).');
      if (typeof button.label !== 'string' || [...button.label].length > 80) return at('label', 'BASE_TYPE_MAX_LENGTH', 'Must be 80 or fewer in length.');
      if (typeof button.custom_id !== 'string' || button.custom_id.length < 1 || button.custom_id.length > 100) {
        return at('custom_id', 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.');
      }
      if (ids.has(button.custom_id)) return at('custom_id', 'COMPONENT_CUSTOM_ID_DUPLICATED', 'Component custom id cannot be duplicated');
      ids.add(button.custom_id);
    }
  }
  return undefined;
}

/** The characters that count toward an embed's 6,000: title, description, fields, footer, author. */
function embedChars(embed: any): number {
  const count = (text: unknown) => (typeof text === 'string' ? [...text].length : 0);
  const fields = Array.isArray(embed?.fields) ? embed.fields : [];
  return count(embed?.title) + count(embed?.description) + count(embed?.footer?.text) + count(embed?.author?.name) + fields.reduce((n: number, f: any) => n + count(f?.name) + count(f?.value), 0);
}

// Discord's other half: the application's key pair and the interactions it sends.

export interface DiscordApp {
  /** The application public key as the Developer Portal shows it (64 hex digits). */
  publicKey: string;
  privateKey: KeyObject;
}

export function discordApp(): DiscordApp {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const der = publicKey.export({ format: 'der', type: 'spki' });
  return { publicKey: der.subarray(der.length - 32).toString('hex'), privateKey };
}

export interface Presser {
  id: string;
  username?: string;
  /** Pressed in a direct message with the bot (`user`) rather than in a server (`member.user`). */
  dm?: boolean;
}

function userObject(who: Presser) {
  return { id: who.id, username: who.username ?? `user${who.id.slice(-4)}`, global_name: who.username ?? null, discriminator: '0', avatar: null, public_flags: 0 };
}

function envelope(type: number, who: Presser, data: unknown, message?: FakeDiscordMessage) {
  const base = {
    app_permissions: '562949953601536',
    application_id: FAKE_APPLICATION,
    entitlements: [],
    id: snowflake(),
    locale: 'en-US',
    token: `aW50ZXJhY3Rpb246${randomBytes(24).toString('base64url')}`,
    type,
    version: 1,
    data,
    ...(message ? { message: wire(message), channel_id: message.channel_id, channel: { id: message.channel_id, type: who.dm ? 1 : 0 } } : {}),
  };
  if (who.dm) return { ...base, context: 1, authorizing_integration_owners: { '1': who.id }, user: userObject(who) };
  return {
    ...base,
    context: 0,
    authorizing_integration_owners: { '0': FAKE_GUILD },
    guild_id: FAKE_GUILD,
    guild_locale: 'en-US',
    guild: { id: FAKE_GUILD, locale: 'en-US', features: [] },
    member: { avatar: null, deaf: false, flags: 0, joined_at: '2025-01-01T00:00:00.000000+00:00', mute: false, nick: null, pending: false, permissions: '2248473465835073', premium_since: null, roles: [], user: userObject(who) },
  };
}

/** Discord's endpoint check: type 1, expecting {type: 1} back. */
export const pingInteraction = () => ({ application_id: FAKE_APPLICATION, id: snowflake(), token: randomBytes(16).toString('hex'), type: 1, user: userObject({ id: '1' }), version: 1 });

/** A button press on a message (type 3). */
export const buttonPress = (who: Presser, customId: string, message?: FakeDiscordMessage) =>
  envelope(3, who, { component_type: 2, custom_id: customId }, message);

/**
 * A modal submit (type 5) with one text input, in the Label (type 18) the modal was sent with,
 * as Discord submits it; `inActionRow` for a modal of the older kind (an Action Row around it).
 */
export const modalSubmit = (who: Presser, customId: string, value: string, message?: FakeDiscordMessage, inputId = 'answer', inActionRow = false) =>
  envelope(5, who, { custom_id: customId, components: [inActionRow ? { type: 1, id: 1, components: [{ type: 4, id: 2, custom_id: inputId, value }] } : { type: 18, id: 1, component: { type: 4, id: 2, custom_id: inputId, value } }] }, message);

/** Sends an interaction to the relay the way Discord does: signed `timestamp + body` with the app's key. */
export async function sendInteraction(url: string, app: DiscordApp, interaction: unknown, options: { badSignature?: boolean; timestamp?: string } = {}) {
  const body = JSON.stringify(interaction);
  const timestamp = options.timestamp ?? String(Math.floor(Date.now() / 1000));
  const signature = sign(null, Buffer.from(timestamp + body), options.badSignature ? discordApp().privateKey : app.privateKey).toString('hex');
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'Discord-Interactions/1.0 (+https://discord.com)', 'x-signature-ed25519': signature, 'x-signature-timestamp': timestamp },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
