import { Hono, type Context } from 'hono';
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { InteractionResponseType, InteractionType, MessageFlags, type APIInteractionResponse } from 'discord-api-types/v10';
import { z } from 'zod';
import { readLimitedOr } from '../../server/http.js';
import type { ChannelInbox, InboundOutcome } from '../channel.js';
import { SeenSignatures } from '../replay-guard.js';
import { clip } from '../card-text.js';
import { ANSWER_INPUT_ID, decodeComponentId, MESSAGE_CHARS, modalOf } from './message.js';

// Discord's interactions endpoint (POST /channels/discord/interactions): Discord sends every
// button press and modal submit here, signed with the application's Ed25519 key, and waits
// (3 s at most) for the answer in the HTTP response. No gateway connection, no message
// content intent: the bot only posts, edits, and reads what people press or type in a modal.

/** Interactions are small; anything bigger is not Discord. */
const MAX_BODY_BYTES = 64 * 1024;

/** Ed25519 public keys as SPKI DER: this fixed prefix, then the 32 bytes Discord shows as hex. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export function publicKeyOf(hex: string): KeyObject {
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
}

/** A signed interaction older (or newer) than this is a replay, not Discord. */
export const MAX_SKEW_SECONDS = 5 * 60;

/** Discord signs the timestamp header (Unix seconds) followed by the raw body. */
export function signatureValid(key: KeyObject, signature: string | undefined, timestamp: string | undefined, body: Buffer, nowMs = Date.now()): boolean {
  if (!signature || !timestamp || !/^[0-9a-f]{128}$/i.test(signature)) return false;
  // Real time, not the relay's clock: this is about the network.
  if (!/^\d{1,12}$/.test(timestamp) || Math.abs(nowMs / 1000 - Number(timestamp)) > MAX_SKEW_SECONDS) return false;
  try {
    return verify(null, Buffer.concat([Buffer.from(timestamp, 'utf8'), body]), key, Buffer.from(signature, 'hex'));
  } catch {
    return false;
  }
}

const UserSchema = z.object({ id: z.string().min(1) });
// Only the fields the relay reads; Discord adds fields over time, so the rest is let through.
const InteractionSchema = z.object({
  type: z.number().int(),
  data: z.object({ custom_id: z.string().optional(), components: z.array(z.unknown()).optional() }).optional(),
  member: z.object({ user: UserSchema }).optional(),
  user: UserSchema.optional(),
});
type Interaction = z.infer<typeof InteractionSchema>;

const TextInputSchema = z.object({ custom_id: z.literal(ANSWER_INPUT_ID), value: z.string() });

export function interactionRoutes(inbox: ChannelInbox, key: KeyObject): Hono {
  const app = new Hono();
  const seen = new SeenSignatures(MAX_SKEW_SECONDS);
  app.post('/interactions', async (c) => {
    const body = await readLimitedOr(c.req.raw, MAX_BODY_BYTES, (err) => fail(c, 413, err.code, err.message));
    if (!Buffer.isBuffer(body)) return body;
    const signature = c.req.header('x-signature-ed25519');
    const timestamp = c.req.header('x-signature-timestamp');
    if (!signatureValid(key, signature, timestamp, body)) {
      return fail(c, 401, 'unauthorized', 'Invalid request signature: not signed with this application’s public key.');
    }
    // A captured interaction sent again inside the window is refused: Discord sends each once.
    if (!seen.firstTime(signature!.toLowerCase(), Number(timestamp), Date.now() / 1000)) {
      return fail(c, 401, 'unauthorized', 'This signed interaction was already received: a replay is refused.');
    }
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      return fail(c, 400, 'malformed_json', 'The interaction is not valid JSON.');
    }
    const parsed = InteractionSchema.safeParse(json);
    if (!parsed.success) return fail(c, 400, 'invalid_interaction', `Not a Discord interaction: ${parsed.error.issues[0]?.message ?? 'unreadable'}.`);
    const response = await respond(inbox, parsed.data);
    return response ? c.json(response) : fail(c, 400, 'unsupported_interaction', `askrelay takes buttons and modals only (interaction type ${parsed.data.type}).`);
  });
  return app;
}

/** The interaction's answer, or undefined for kinds the relay never asks for (slash commands). */
async function respond(inbox: ChannelInbox, interaction: Interaction): Promise<APIInteractionResponse | undefined> {
  if (interaction.type === InteractionType.Ping) return { type: InteractionResponseType.Pong };
  if (interaction.type !== InteractionType.MessageComponent && interaction.type !== InteractionType.ModalSubmit) return undefined;
  // In a server the person is `member.user`; in a direct message, `user`.
  const user = interaction.member?.user.id ?? interaction.user?.id;
  const id = decodeComponentId(interaction.data?.custom_id ?? '');
  if (!user || !id) return privately('That button is not one of askrelay’s questions.');

  if (interaction.type === InteractionType.ModalSubmit) {
    const text = id.kind === 'modal' ? typedAnswer(interaction.data?.components ?? []) : undefined;
    if (text === undefined) return privately('That form is not one of askrelay’s questions.');
    return outcome(await inbox.reply({ user, cardId: id.cardId, text }));
  }
  if (id.kind === 'option') return outcome(await inbox.tap({ user, cardId: id.cardId, option: id.option }));
  if (id.kind === 'reply') {
    // Nobody gets a form they may not send, nor one for a question that is over.
    const refused = await inbox.beforePrompt({ user, cardId: id.cardId });
    if (refused) return privately(refused.notice);
    return { type: InteractionResponseType.Modal, data: modalOf((await inbox.card(id.cardId))!) };
  }
  return privately('That button is not one of askrelay’s questions.');
}

/** Answered: acknowledged without a visible reply (the outbox edits the message once). Ignored: the same. */
function outcome(result: InboundOutcome): APIInteractionResponse {
  if (result.kind === 'answered' || result.kind === 'ignored') return { type: InteractionResponseType.DeferredMessageUpdate };
  return privately(result.notice);
}

/** A reply only the person who pressed sees. */
function privately(notice: string): APIInteractionResponse {
  return {
    type: InteractionResponseType.ChannelMessageWithSource,
    data: { content: clip(notice, MESSAGE_CHARS), flags: MessageFlags.Ephemeral, allowed_mentions: { parse: [] } },
  };
}

/** The text input's value, in an action row (as the relay sends the modal) or a label component. */
function typedAnswer(components: unknown[]): string | undefined {
  for (const component of components) {
    const input = TextInputSchema.safeParse(component);
    if (input.success) return input.data.value;
    if (typeof component !== 'object' || component === null) continue;
    const { components: inner, component: single } = component as { components?: unknown; component?: unknown };
    const found = typedAnswer([...(Array.isArray(inner) ? inner : []), ...(single ? [single] : [])]);
    if (found !== undefined) return found;
  }
  return undefined;
}

function fail(c: Context, status: 400 | 401 | 413, code: string, message: string) {
  return c.json({ error: { code, message } }, status);
}
