import {
  ButtonStyle,
  ComponentType,
  TextInputStyle,
  type APIActionRowComponent,
  type APIButtonComponentWithCustomId,
  type APIModalInteractionResponseCallbackData,
} from 'discord-api-types/v10';
import type { Card } from '../../cards/model.js';
import { clip, closedLine, heading, howToReply, questionTexts, takesButtons } from '../card-text.js';

// A card as a Discord message (Discord's Markdown, message components). Pure: no I/O.
// One question with one choice gets buttons (and "Reply…" when free text is allowed);
// everything else is text with numbered options and one "Reply…" button. "Reply…" opens a
// modal: Discord's own way to take typed text from a bot's message without a gateway
// connection and without the privileged message-content intent.

/** Discord's limit for a message's content. */
export const MESSAGE_CHARS = 2000;
/**
 * The closing line ("Answered: …" with every pick) is cut to this many UTF-16 units, as the
 * message is measured: many long picks would otherwise fill the message alone, and Discord
 * refuses content over 2000 characters, so the card's message would never close.
 */
export const CLOSED_LINE_CHARS = 1000;
/** Discord refuses a button label over 80 characters. */
export const BUTTON_LABEL_CHARS = 80;
/** Discord refuses a custom_id over 100 characters (buttons, modals, text inputs). */
export const CUSTOM_ID_CHARS = 100;
/** At most 5 buttons per action row and 5 action rows per message: 25 buttons. */
export const ROW_BUTTONS = 5;
export const MAX_ROWS = 5;
/** A modal's title and a text input's label: 45 characters; a placeholder: 100; a value: 4000. */
export const MODAL_TITLE_CHARS = 45;
export const INPUT_PLACEHOLDER_CHARS = 100;
export const ANSWER_CHARS = 4000;

export const REPLY_LABEL = 'Reply…';
/** The text input's custom_id inside the modal. */
export const ANSWER_INPUT_ID = 'answer';

export type ButtonRow = APIActionRowComponent<APIButtonComponentWithCustomId>;

export interface DiscordPost {
  content: string;
  components: ButtonRow[];
  /** Agents' text must never ping @everyone, roles or people. */
  allowed_mentions: { parse: [] };
}

/** What a component or modal's custom_id says: an option tap, the "Reply…" button, or the modal it opened. */
export type ComponentId =
  | { kind: 'option'; cardId: string; option: number }
  | { kind: 'reply'; cardId: string }
  | { kind: 'modal'; cardId: string };

export function encodeComponentId(id: ComponentId): string {
  const tail = id.kind === 'option' ? String(id.option) : id.kind;
  return `askrelay:${id.cardId}:${tail}`;
}

export function decodeComponentId(text: string): ComponentId | undefined {
  const match = /^askrelay:([\w-]{1,80}):(\d{1,3}|reply|modal)$/.exec(text);
  if (!match) return undefined;
  const [, cardId, tail] = match;
  if (tail === 'reply' || tail === 'modal') return { kind: tail, cardId };
  return { kind: 'option', cardId, option: Number(tail) };
}

/** The card as posted. */
export function postOf(card: Card): DiscordPost {
  const rows = buttonRowsOf(card);
  const footer = howToReply(rows ? card : textOnly(card), 'Use **Reply…**');
  const reply = replyButton(card);
  return {
    content: bodyOf(card, rows !== undefined, footer),
    components: rows ?? (reply ? [{ type: ComponentType.ActionRow, components: [reply] }] : []),
    allowed_mentions: { parse: [] },
  };
}

/** The card's message once it closed: the question stays, the buttons go, the outcome is added. */
export function closedOf(card: Card): DiscordPost {
  return {
    content: bodyOf(card, buttonRowsOf(card) !== undefined, `**${clip(closedLine(card), CLOSED_LINE_CHARS)}**`),
    components: [],
    allowed_mentions: { parse: [] },
  };
}

/** The modal "Reply…" opens: one paragraph input, the answer typed the way the message explains. */
export function modalOf(card: Card): APIModalInteractionResponseCallbackData {
  const only = card.questions.length === 1 ? card.questions[0].text.trim() : '';
  return {
    custom_id: encodeComponentId({ kind: 'modal', cardId: card.id }),
    title: clip(only || heading(card), MODAL_TITLE_CHARS),
    // A Label around the input: Discord's change-log marks an Action Row in a modal deprecated.
    components: [
      {
        type: ComponentType.Label,
        label: 'Your answer',
        component: {
          type: ComponentType.TextInput,
          custom_id: ANSWER_INPUT_ID,
          style: TextInputStyle.Paragraph,
          placeholder: clip(howToReply(textOnly(card), 'Answer'), INPUT_PLACEHOLDER_CHARS),
          max_length: ANSWER_CHARS,
          required: true,
        },
      },
    ],
  };
}

/** Button rows for one question with one choice; undefined when the card is answered in text. */
function buttonRowsOf(card: Card): ButtonRow[] | undefined {
  if (!takesButtons(card)) return undefined;
  const q = card.questions[0];
  const buttons: APIButtonComponentWithCustomId[] = q.options.map((o, option) => ({
    type: ComponentType.Button,
    style: ButtonStyle.Primary,
    label: clip(o.label.trim() || `${option + 1}`, BUTTON_LABEL_CHARS),
    custom_id: encodeComponentId({ kind: 'option', cardId: card.id, option }),
  }));
  const reply = q.freeText ? replyButton(card) : undefined;
  // Beyond 25 buttons (or an id too long for a custom_id) the card is answered in text.
  if (buttons.length + (reply ? 1 : 0) > ROW_BUTTONS * MAX_ROWS) return undefined;
  if (buttons.some((b) => b.custom_id.length > CUSTOM_ID_CHARS)) return undefined;
  const rows: APIButtonComponentWithCustomId[][] = [];
  for (let i = 0; i < buttons.length; i += ROW_BUTTONS) rows.push(buttons.slice(i, i + ROW_BUTTONS));
  if (reply) {
    // "Reply…" gets a row of its own when one is left, so it does not read as an option.
    if (rows.length < MAX_ROWS) rows.push([reply]);
    else rows[rows.length - 1].push(reply);
  }
  return rows.map((components) => ({ type: ComponentType.ActionRow, components }));
}

function replyButton(card: Card): APIButtonComponentWithCustomId | undefined {
  const custom_id = encodeComponentId({ kind: 'reply', cardId: card.id });
  if (custom_id.length > CUSTOM_ID_CHARS) return undefined;
  return { type: ComponentType.Button, style: ButtonStyle.Secondary, label: REPLY_LABEL, custom_id };
}

/** The card, marked to be answered in text (for howToReply when buttons do not fit). */
const textOnly = (card: Card): Card => ({ ...card, layout: 'form' });

function bodyOf(card: Card, buttons: boolean, footer: string): string {
  // Too long for one message: cut question texts and descriptions first, the footer stays.
  for (const max of [Infinity, 500, 120]) {
    const text = render(card, buttons, max);
    if (text.length + footer.length + 2 <= MESSAGE_CHARS) return `${text}\n\n${footer}`;
  }
  return `${clip(render(card, buttons, 120), MESSAGE_CHARS - footer.length - 2)}\n\n${footer}`;
}

function render(card: Card, buttons: boolean, max: number): string {
  const cut = (text: string) => (max === Infinity ? text : clip(text, max));
  const lines = [`**${heading(card)}**`];
  for (const q of questionTexts(card)) {
    const label = q.number ? `**${q.number}.${q.header ? ` ${q.header}` : ''}**${q.header ? ' —' : ''}` : '';
    lines.push('', `${label ? `${label} ` : ''}${cut(q.text)}${q.hint ? ` *(${q.hint})*` : ''}`);
    for (const o of q.options) {
      const description = o.description && max > 120 ? ` — *${cut(o.description)}*` : '';
      // With buttons the labels are on the buttons; descriptions and cut labels still need a place.
      if (buttons && !description && [...o.label].length <= BUTTON_LABEL_CHARS) continue;
      lines.push(`${buttons ? '-' : `${o.n}.`} ${cut(o.label)}${description}`);
    }
  }
  return lines.join('\n');
}
