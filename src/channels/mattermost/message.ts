import { createHmac } from 'node:crypto';
import { sameSecret } from '../../same-secret.js';
import type { Card } from '../../cards/model.js';
import { clip, closedLine, heading, howToReply, questionTexts, takesButtons } from '../card-text.js';

// A card as a Mattermost post (Markdown). Pure: no I/O.
// One question with one choice gets interactive message buttons in a message attachment;
// everything else is text with numbered options, answered by a reply in the post's thread.
// Mattermost does not sign the requests a button click makes, so each button's context
// carries an HMAC of what it means (the card, the option, and until when it may be used),
// made with the relay's secret. Mattermost keeps contexts on its server (clients never see
// them) and names the clicker itself, in the request's own `user_id`.

/** Mattermost refuses a post whose message is longer than this (runes). */
export const MESSAGE_CHARS = 16_383;
/** Mattermost sets no limit on a button's name; longer labels are cut for the button (the full label stays in the text). */
export const BUTTON_LABEL_CHARS = 60;
/** Where Mattermost sends button clicks, under the relay's public address. */
export const ACTIONS_PATH = 'channels/mattermost/actions';
export const WHERE_TO_REPLY = 'Reply in this thread';

/**
 * How long after its card's expiry a button's context is still taken (the clicker is told the
 * question expired); after that it is refused. The closing edit removes the buttons long before.
 */
export const BUTTON_GRACE_MS = 3_600_000;

export interface ActionContext {
  cardId: string;
  option: number;
  /** Milliseconds since the epoch after which the context is refused. */
  expires: number;
  sig: string;
}

export interface MattermostAction {
  id: string;
  name: string;
  type: 'button';
  integration: { url: string; context: ActionContext };
}

export interface MattermostAttachment {
  text?: string;
  actions?: MattermostAction[];
}

/** The body of `POST /api/v4/posts`. */
export interface MattermostNewPost {
  channel_id: string;
  message: string;
  props?: { attachments: MattermostAttachment[] };
}

/** The body of `PUT /api/v4/posts/{id}/patch` that closes a card's post. */
export interface MattermostClosePatch {
  message: string;
  props: { attachments: MattermostAttachment[] };
}

export interface PostSettings {
  channel: string;
  /** The relay's public address (ASKRELAY_PUBLIC_URL, else where it listens). */
  publicUrl: string;
  secret: string;
}

/**
 * A button's action id. Mattermost routes clicks through `/posts/{id}/actions/{action_id}`
 * with action_id matching `[A-Za-z0-9]+`: an id with `_` or `-` makes every click fail.
 */
export const actionIdOf = (option: number) => `option${option}`;

export function optionOfActionId(id: string): number | undefined {
  const match = /^option(\d{1,3})$/.exec(id);
  return match ? Number(match[1]) : undefined;
}

/** The HMAC of a button's meaning; the prefix keeps it from standing for anything else the secret signs. */
export function signOption(secret: string, context: Omit<ActionContext, 'sig'>): string {
  return createHmac('sha256', secret).update(`askrelay mattermost button\0${context.cardId}\0${context.option}\0${context.expires}`).digest('hex');
}

/** True when the context is one of this relay's own buttons, unchanged (its expiry is checked apart). */
export function verifyOption(secret: string, context: ActionContext): boolean {
  const expected = Buffer.from(signOption(secret, context), 'hex');
  const given = /^[0-9a-f]{64}$/i.test(context.sig) ? Buffer.from(context.sig, 'hex') : Buffer.alloc(0);
  return sameSecret(given, expected);
}

/** A button's signed context: valid until its card's expiry and BUTTON_GRACE_MS more. */
export function contextOf(card: Card, option: number, secret: string): ActionContext {
  const unsigned = { cardId: card.id, option, expires: Date.parse(card.expiresAt) + BUTTON_GRACE_MS };
  return { ...unsigned, sig: signOption(secret, unsigned) };
}

/** The integration URL for the buttons (the public URL may or may not end with a slash). */
export const actionsUrlOf = (publicUrl: string) => `${publicUrl.replace(/\/+$/, '')}/${ACTIONS_PATH}`;

/** The card as posted. */
export function postOf(card: Card, settings: PostSettings): MattermostNewPost {
  if (!takesButtons(card)) {
    return { channel_id: settings.channel, message: bodyOf(card, false, howToReply(card, WHERE_TO_REPLY)) };
  }
  const url = actionsUrlOf(settings.publicUrl);
  const actions = card.questions[0].options.map((o, option): MattermostAction => ({
    id: actionIdOf(option),
    name: clip(o.label, BUTTON_LABEL_CHARS),
    type: 'button',
    integration: { url, context: contextOf(card, option, settings.secret) },
  }));
  return {
    channel_id: settings.channel,
    message: bodyOf(card, true),
    props: { attachments: [{ text: howToReply(card, WHERE_TO_REPLY), actions }] },
  };
}

/** The card's post once it closed: the question stays, the buttons go, the outcome is added. */
export function closedOf(card: Card): MattermostClosePatch {
  return { message: bodyOf(card, takesButtons(card), closedLine(card)), props: { attachments: [] } };
}

function bodyOf(card: Card, buttons: boolean, footer?: string): string {
  // Too long for one post: cut question texts and descriptions first, then the whole.
  for (const max of [Infinity, 500, 120]) {
    const text = render(card, buttons, footer, max);
    if ([...text].length <= MESSAGE_CHARS) return text;
  }
  return clip(render(card, buttons, footer, 120), MESSAGE_CHARS);
}

/**
 * Agent text with its @-mentions made inert: Mattermost notifies a whole channel for
 * `@channel`, `@here` and `@all` (and a person for `@name`) in a post's Markdown; a zero-width
 * space after the `@` keeps the text as it reads and notifies nobody.
 */
export const quiet = (text: string) => text.replace(/(^|[^\w@.])@(?=[\w.-])/g, '$1@\u200b');

function render(card: Card, buttons: boolean, footer: string | undefined, max: number): string {
  const cut = (text: string) => quiet(max === Infinity ? text : clip(text, max));
  const blocks = [`**${quiet(heading(card))}**`];
  for (const q of questionTexts(card)) {
    const lead = q.number ? `**${q.number}.${q.header ? ` ${quiet(q.header)}` : ''}**${q.header ? ' —' : ''} ` : '';
    const lines = [`${lead}${cut(q.text)}${q.hint ? ` _(${q.hint})_` : ''}`];
    for (const o of q.options) {
      const description = o.description && max > 120 ? ` — ${cut(o.description)}` : '';
      // With buttons the labels are on the buttons; descriptions and cut labels still need a place.
      if (buttons && !description && [...o.label].length <= BUTTON_LABEL_CHARS) continue;
      lines.push(`${buttons ? '-' : `${o.n}.`} ${cut(o.label)}${description}`);
    }
    blocks.push(lines.join('\n'));
  }
  if (footer) blocks.push(footer);
  return blocks.join('\n\n');
}
