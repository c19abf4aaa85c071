import { DiscordAPIError, HTTPError, RateLimitError, REST } from '@discordjs/rest';
import { Routes, type APIMessage } from 'discord-api-types/v10';
import { createPublicKey, verify } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCaptureServer, type CaptureServer } from '../support/capture-server.js';
import {
  buttonPress,
  discordApp,
  FAKE_APPLICATION,
  FAKE_GUILD,
  modalSubmit,
  pingInteraction,
  sendInteraction,
  startFakeDiscord,
  type FakeDiscord,
} from './discord-api.js';

// The fake Discord REST API pinned to Discord's documented wire format, driven by
// @discordjs/rest (as the product configures it: no retries, rate limits rejected at once)
// and raw HTTP where the status line or headers matter. Sources:
// https://docs.discord.com/developers/resources/message#create-message,
// https://docs.discord.com/developers/components/reference, https://docs.discord.com/developers/reference#error-messages,
// https://docs.discord.com/developers/topics/rate-limits, https://docs.discord.com/developers/interactions/overview

const TOKEN = 'MTEwMDAwMDAwMDAwMDAwMDAwMw.fake.bot-token';
const DISCORD_EPOCH = 1_420_070_400_000n;

let fake: FakeDiscord;
beforeEach(async () => {
  fake = await startFakeDiscord({ token: TOKEN });
});
afterEach(() => fake.close());

const rest = (token = TOKEN) =>
  new REST({ version: '10', api: fake.url, retries: 0, offset: 0, rejectOnRateLimit: () => true, hashSweepInterval: 0, handlerSweepInterval: 0 }).setToken(token);
const post = (body: unknown, client = rest()) => client.post(Routes.channelMessages(fake.channel), { body }) as Promise<APIMessage>;
const patch = (id: string, body: unknown) => rest().patch(Routes.channelMessage(fake.channel, id), { body }) as Promise<APIMessage>;

async function failure(call: Promise<unknown>): Promise<any> {
  try {
    await call;
  } catch (err) {
    return err;
  }
  throw new Error('the call succeeded');
}

/** The 50035 body Discord sends for one bad field, `path` its place in the nested `errors`. */
const invalid = (path: (string | number)[], code: string, message: string) => {
  let errors: any = { _errors: [{ code, message }] };
  for (const key of [...path].reverse()) errors = { [key]: errors };
  return { message: 'Invalid Form Body', code: 50035, errors };
};
const refusal = async (body: unknown) => {
  const err = await failure(post(body));
  expect(err).toBeInstanceOf(DiscordAPIError);
  expect(err.status).toBe(400);
  return err.rawError;
};

const button = (i: number, extra: Record<string, unknown> = {}) => ({ type: 2, style: 1, label: `Option ${i}`, custom_id: `askrelay:c1:${i}`, ...extra });
const row = (...components: unknown[]) => ({ type: 1, components });
const grid = (rows: number, perRow: number) => Array.from({ length: rows }, (_, r) => row(...Array.from({ length: perRow }, (_, b) => button(r * perRow + b))));

describe('the fake Discord REST API, driven by @discordjs/rest', () => {
  it('answers a missing or wrong bot token with 401 {message:"401: Unauthorized", code:0}', async () => {
    const err = await failure(post({ content: 'hi' }, rest('not-the-token')));
    expect(err).toBeInstanceOf(DiscordAPIError);
    expect([err.status, err.code, err.message, err.rawError]).toEqual([401, 0, '401: Unauthorized', { message: '401: Unauthorized', code: 0 }]);

    const res = await fetch(`${fake.url}/v10/channels/${fake.channel}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"content":"hi"}' });
    expect([res.status, await res.json()]).toEqual([401, { message: '401: Unauthorized', code: 0 }]);
    expect(fake.messages).toHaveLength(0);
  });

  it('GET /users/@me answers the bot user; a wrong token gets the 401', async () => {
    expect(await rest().get(Routes.user('@me'))).toMatchObject({ id: FAKE_APPLICATION, username: 'askrelay', bot: true });
    const err = await failure(rest('not-the-token').get(Routes.user('@me')));
    expect([err.status, err.message]).toEqual([401, '401: Unauthorized']);
  });

  it('creates a message: a message object with a snowflake id, the bot as author and rate-limit headers', async () => {
    const components = [row(button(0), button(1))];
    const message = await post({ content: 'Which database?', components, allowed_mentions: { parse: [] } });
    expect(message).toEqual({
      id: expect.stringMatching(/^\d{17,20}$/),
      type: 0,
      channel_id: fake.channel,
      content: 'Which database?',
      components,
      embeds: [],
      author: expect.objectContaining({ id: FAKE_APPLICATION, bot: true }),
      timestamp: expect.any(String),
      edited_timestamp: null,
      tts: false,
      mention_everyone: false,
      mentions: [],
      mention_roles: [],
      attachments: [],
      pinned: false,
      flags: 0,
      application_id: FAKE_APPLICATION,
    });
    // A snowflake carries its creation time: milliseconds since Discord's epoch, shifted by 22 bits.
    expect(Math.abs(Number((BigInt(message.id) >> 22n) + DISCORD_EPOCH) - Date.parse(message.timestamp))).toBeLessThan(5_000);
    expect(fake.requests[0].headers.authorization).toBe(`Bot ${TOKEN}`);

    const res = await fetch(`${fake.url}/v10/channels/${fake.channel}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${TOKEN}`, 'content-type': 'application/json' },
      body: '{"content":"again"}',
    });
    expect(res.status).toBe(200);
    expect(Object.fromEntries(['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-bucket'].map((h) => [h, res.headers.get(h)]))).toEqual({
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '4',
      'x-ratelimit-bucket': 'fake0bucket0messages',
    });
    expect(Number(res.headers.get('x-ratelimit-reset-after'))).toBeGreaterThan(0);
  });

  it('edits a message with PATCH: new content and components, edited_timestamp set; unknown ids and channels are 404 with their codes', async () => {
    const message = await post({ content: 'open', components: [row(button(0))] });
    const edited = await patch(message.id, { content: 'closed', components: [] });
    expect(edited).toMatchObject({ id: message.id, content: 'closed', components: [], edited_timestamp: expect.any(String) });
    expect(fake.messages[0].edits).toEqual([{ content: 'closed', components: [] }]);

    fake.deleteMessage(message.id);
    const gone = await failure(patch(message.id, { content: 'x' }));
    expect([gone.status, gone.rawError]).toEqual([404, { message: 'Unknown Message', code: 10008 }]);
    const elsewhere = await failure(rest().post(Routes.channelMessages('1100000000000000099'), { body: { content: 'x' } }));
    expect([elsewhere.status, elsewhere.rawError]).toEqual([404, { message: 'Unknown Channel', code: 10003 }]);
    expect((await refusal({})) as unknown).toEqual({ message: 'Cannot send an empty message', code: 50006 });
  });

  it('refuses content over 2,000 characters with 50035 and the field in Discord’s nested errors', async () => {
    // Characters, not UTF-16 units: 2,000 emoji fit.
    await post({ content: '😀'.repeat(2000) });
    expect(await refusal({ content: 'x'.repeat(2001) })).toEqual(invalid(['content'], 'BASE_TYPE_MAX_LENGTH', 'Must be 2000 or fewer in length.'));
    // The library reads that shape into one line per bad field.
    const err = await failure(post({ content: 'x'.repeat(2001) }));
    expect(err.message).toBe('Invalid Form Body\ncontent[BASE_TYPE_MAX_LENGTH]: Must be 2000 or fewer in length.');
    // An edit is held to the same limit and changes nothing when refused.
    const [first] = fake.messages;
    const edit = await failure(patch(first.id, { content: 'x'.repeat(2001) }));
    expect(edit.rawError.code).toBe(50035);
    expect(first.edits).toEqual([]);
  });

  it('takes 5 rows of 5 buttons and refuses a sixth row, a sixth button, long labels and custom_ids, and duplicates', async () => {
    await post({ content: 'grid', components: grid(5, 5) });
    expect(await refusal({ components: grid(6, 1) })).toEqual(invalid(['components'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 0 and 5 in length.'));
    expect(await refusal({ components: grid(1, 6) })).toEqual(invalid(['components', 0, 'components'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 5 in length.'));
    await post({ components: [row(button(0, { label: 'l'.repeat(80), custom_id: 'c'.repeat(100) }))] });
    expect(await refusal({ components: [row(button(0, { label: 'l'.repeat(81) }))] })).toEqual(
      invalid(['components', 0, 'components', 0, 'label'], 'BASE_TYPE_MAX_LENGTH', 'Must be 80 or fewer in length.'),
    );
    expect(await refusal({ components: [row(button(0), button(1, { custom_id: 'c'.repeat(101) }))] })).toEqual(
      invalid(['components', 0, 'components', 1, 'custom_id'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.'),
    );
    expect(await refusal({ components: [row(button(0, { custom_id: '' }))] })).toEqual(
      invalid(['components', 0, 'components', 0, 'custom_id'], 'BASE_TYPE_BAD_LENGTH', 'Must be between 1 and 100 in length.'),
    );
    expect(await refusal({ components: [row(button(0)), row(button(0))] })).toEqual(
      invalid(['components', 1, 'components', 0, 'custom_id'], 'COMPONENT_CUSTOM_ID_DUPLICATED', 'Component custom id cannot be duplicated'),
    );
    expect(fake.messages).toHaveLength(2);
  });

  it('takes up to 10 embeds and 6,000 characters across them; more is refused with 50035', async () => {
    const embed = (chars: number) => ({ title: 't'.repeat(Math.min(chars, 256)), description: 'd'.repeat(Math.max(0, chars - 256)) });
    const message = await post({ embeds: Array.from({ length: 10 }, () => embed(600)) });
    expect(message.embeds).toHaveLength(10);
    expect(await refusal({ embeds: Array.from({ length: 11 }, () => embed(10)) })).toEqual(invalid(['embeds'], 'BASE_TYPE_MAX_LENGTH', 'Must be 10 or fewer in length.'));
    expect(await refusal({ embeds: [embed(4000), { fields: [{ name: 'n', value: 'v'.repeat(2000) }] }] })).toEqual(
      invalid(['embeds'], 'MAX_EMBED_SIZE_EXCEEDED', 'Embed size exceeds maximum size of 6000'),
    );
  });

  it('answers a rate limit with 429, Retry-After in whole seconds and retry_after in the body; the library rejects with that wait', async () => {
    fake.rateLimitNext(2.5);
    const err = await failure(post({ content: 'hi' }));
    expect(err).toBeInstanceOf(RateLimitError);
    expect([err.retryAfter, err.global]).toEqual([3000, false]);

    fake.rateLimitNext(0.25, 1, true);
    const res = await fetch(`${fake.url}/v10/channels/${fake.channel}/messages`, {
      method: 'POST',
      headers: { authorization: `Bot ${TOKEN}`, 'content-type': 'application/json' },
      body: '{"content":"hi"}',
    });
    expect([res.status, res.headers.get('retry-after'), res.headers.get('x-ratelimit-global'), res.headers.get('x-ratelimit-scope')]).toEqual([429, '1', 'true', 'global']);
    expect(await res.json()).toEqual({ message: 'You are being rate limited.', retry_after: 0.25, global: true });
    expect(fake.messages).toHaveLength(0);
    expect((await post({ content: 'hi' })).content).toBe('hi');
  });

  it("an outage is Discord's edge answering 503 in plain text, then a refused connection", async () => {
    await fake.setDown(true);
    const err = await failure(post({ content: 'hi' }));
    expect(err).toBeInstanceOf(HTTPError);
    expect(err.status).toBe(503);
    await fake.setDown('refuse');
    const refused = await failure(post({ content: 'hi' }));
    expect(refused.cause?.code ?? refused.code).toBe('ECONNREFUSED');
    await fake.setDown(false);
    expect((await post({ content: 'hi' })).content).toBe('hi');
  });
});

describe("the fake Discord's interactions", () => {
  let app: CaptureServer;
  beforeEach(async () => {
    app = await startCaptureServer(() => ({ status: 200, body: '{"type":6}' }));
  });
  afterEach(() => app.close());

  /** The raw public key as the Developer Portal shows it, made into a key by hand (SPKI prefix for Ed25519). */
  const publicKeyOf = (hex: string) => createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });

  it('signs timestamp + raw body with the application key in X-Signature-Ed25519 and X-Signature-Timestamp', async () => {
    const discord = discordApp();
    expect(discord.publicKey).toMatch(/^[0-9a-f]{64}$/);
    const answer = await sendInteraction(`${app.url}/interactions`, discord, pingInteraction(), { timestamp: '1764504000' });
    expect(answer).toEqual({ status: 200, body: { type: 6 } });
    const [request] = app.requests;
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['x-signature-timestamp']).toBe('1764504000');
    const signature = String(request.headers['x-signature-ed25519']);
    expect(signature).toMatch(/^[0-9a-f]{128}$/);
    expect(verify(null, Buffer.from(`1764504000${request.raw}`), publicKeyOf(discord.publicKey), Buffer.from(signature, 'hex'))).toBe(true);
    // Over anything else, or with another application's key, it does not verify.
    expect(verify(null, Buffer.from(`1764504001${request.raw}`), publicKeyOf(discord.publicKey), Buffer.from(signature, 'hex'))).toBe(false);

    await sendInteraction(`${app.url}/interactions`, discord, pingInteraction(), { badSignature: true });
    const bad = app.requests[1];
    const badSignature = Buffer.from(String(bad.headers['x-signature-ed25519']), 'hex');
    expect(verify(null, Buffer.from(`${bad.headers['x-signature-timestamp']}${bad.raw}`), publicKeyOf(discord.publicKey), badSignature)).toBe(false);
    expect(JSON.parse(request.raw)).toMatchObject({ type: 1, application_id: FAKE_APPLICATION, version: 1 });
  });

  it('a button press is type 3 with the custom_id, from a member in a server or a user in a direct message', async () => {
    await post({ content: 'Which?', components: [row(button(0))] });
    const [message] = fake.messages;
    const inServer = buttonPress({ id: '200000000000000042', username: 'ada' }, 'askrelay:c1:0', message) as any;
    expect(inServer).toMatchObject({
      type: 3,
      application_id: FAKE_APPLICATION,
      guild_id: FAKE_GUILD,
      channel_id: fake.channel,
      data: { component_type: 2, custom_id: 'askrelay:c1:0' },
      member: { user: { id: '200000000000000042', username: 'ada' } },
      message: { id: message.id, content: 'Which?' },
    });
    expect(inServer.user).toBeUndefined();
    expect(inServer.message.edits).toBeUndefined();
    const inDm = buttonPress({ id: '200000000000000042', dm: true }, 'askrelay:c1:0') as any;
    expect([inDm.context, inDm.user.id, inDm.member, inDm.guild_id]).toEqual([1, '200000000000000042', undefined, undefined]);

    const submit = modalSubmit({ id: '200000000000000042' }, 'askrelay:c1:modal', 'MariaDB') as any;
    expect(submit).toMatchObject({ type: 5, data: { custom_id: 'askrelay:c1:modal', components: [{ type: 18, component: { type: 4, custom_id: 'answer', value: 'MariaDB' } }] } });
    const older = modalSubmit({ id: '200000000000000042' }, 'askrelay:c1:modal', 'MariaDB', undefined, 'answer', true) as any;
    expect(older.data.components).toEqual([{ type: 1, id: 1, components: [{ type: 4, id: 2, custom_id: 'answer', value: 'MariaDB' }] }]);
  });
});
