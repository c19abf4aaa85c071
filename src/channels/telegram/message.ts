import type { Card } from '../../cards/model.js';
import { clip, closedLine, heading, howToReply, questionTexts, takesButtons } from '../card-text.js';
import { TELEGRAM, escapeMarkup, markdownFor } from '../markdown.js';

// A card as a Telegram message (HTML parse mode). Pure: no I/O.
// One question with one choice gets full-width inline keyboard buttons (one per row) and,
// when free text is allowed, "Other…", which asks for a forced reply instead of answering.
// Everything else is text with numbered options, answered by replying to the message.

/** Telegram refuses callback data over 64 bytes. */
export const CALLBACK_DATA_BYTES = 64;
/** Telegram shows about this much of a button; longer labels are cut (the full label stays in the text). */
export const BUTTON_LABEL_CHARS = 64;
/** Telegram's limit for a message's text, after entities are parsed. */
export const MESSAGE_CHARS = 4096;
/**
 * The closing line ("Answered: …" with every pick) is cut to this: many long picks would
 * otherwise be over 4096 characters alone, Telegram would refuse the edit ("message is too
 * long") and the card's message would never close.
 */
export const CLOSED_LINE_CHARS = 1000;
/** Telegram's limit for a callback query's notification (the toast after a tap): 0-200 characters. */
export const TOAST_CHARS = 200;

export const OTHER_LABEL = 'Other…';

export interface InlineButton {
  text: string;
  callback_data: string;
}

export interface TelegramPost {
  text: string;
  parse_mode: 'HTML';
  link_preview_options: { is_disabled: true };
  reply_markup?: { inline_keyboard: InlineButton[][] };
}

export type CallbackData = { kind: 'option'; cardId: string; option: number } | { kind: 'other'; cardId: string };

export function encodeCallback(data: CallbackData): string {
  return data.kind === 'option' ? `a:${data.cardId}:${data.option}` : `o:${data.cardId}`;
}

export function decodeCallback(text: string): CallbackData | undefined {
  const option = /^a:([\w-]+):(\d{1,3})$/.exec(text);
  if (option) return { kind: 'option', cardId: option[1], option: Number(option[2]) };
  const other = /^o:([\w-]+)$/.exec(text);
  return other ? { kind: 'other', cardId: other[1] } : undefined;
}

export const escapeHtml = escapeMarkup;

/** The card as posted. */
export function postOf(card: Card): TelegramPost {
  const buttons = keyboardOf(card);
  return {
    text: bodyOf(card, buttons !== undefined, howToReply(buttons ? card : textOnly(card), 'Reply to this message')),
    parse_mode: 'HTML',
    link_preview_options: { is_disabled: true },
    ...(buttons ? { reply_markup: { inline_keyboard: buttons } } : {}),
  };
}

/** The card's message once it closed: the question stays, the buttons go, the outcome is added. */
export function closedOf(card: Card): TelegramPost {
  return {
    text: bodyOf(card, takesButtons(card), `<b>${escapeHtml(clip(closedLine(card), CLOSED_LINE_CHARS))}</b>`),
    parse_mode: 'HTML',
    link_preview_options: { is_disabled: true },
    reply_markup: { inline_keyboard: [] },
  };
}

/** The forced-reply prompt "Other…" sends: it names the person, so only their client opens the reply box. */
export function otherPromptOf(card: Card, user: { id: number; first_name?: string }) {
  const who = `<a href="tg://user?id=${user.id}">${escapeHtml(user.first_name?.trim() || 'you')}</a>`;
  return {
    text: clip(`${who}, type your answer to “${escapeHtml(card.questions[0].text)}” as a reply to this message.`, MESSAGE_CHARS),
    parse_mode: 'HTML' as const,
    reply_markup: { force_reply: true as const, selective: true, input_field_placeholder: 'Your answer' },
  };
}

/** One button per row (full width); undefined when the card is answered in text. */
function keyboardOf(card: Card): InlineButton[][] | undefined {
  if (!takesButtons(card)) return undefined;
  const q = card.questions[0];
  const rows = q.options.map((o, option) => [{ text: clip(o.label, BUTTON_LABEL_CHARS), callback_data: encodeCallback({ kind: 'option', cardId: card.id, option }) }]);
  if (q.freeText) rows.push([{ text: OTHER_LABEL, callback_data: encodeCallback({ kind: 'other', cardId: card.id }) }]);
  // A card id too long for Telegram's callback data is answered in text instead.
  return rows.every(([b]) => Buffer.byteLength(b.callback_data) <= CALLBACK_DATA_BYTES) ? rows : undefined;
}

/** The card, marked to be answered in text (for howToReply when buttons do not fit). */
const textOnly = (card: Card): Card => ({ ...card, layout: 'form' });

function bodyOf(card: Card, buttons: boolean, footer: string): string {
  // Too long for one message: cut question texts and descriptions before escaping, so a cut
  // never splits an HTML tag or entity (Telegram would refuse the whole message).
  for (const max of [Infinity, 500, 120]) {
    const lines = render(card, buttons, max);
    const text = [...lines, '', footer].join('\n');
    if (text.length <= MESSAGE_CHARS) return text;
    if (max !== 120) continue;
    // Still too long: whole lines only (each is complete HTML), then a pointer to the rest.
    const kept: string[] = [];
    let size = footer.length + CUT_NOTE.length + 4;
    for (const line of lines) {
      if (size + line.length + 1 > MESSAGE_CHARS) break;
      kept.push(line);
      size += line.length + 1;
    }
    return [...kept, CUT_NOTE, '', footer].join('\n');
  }
  return footer;
}

const CUT_NOTE = '<i>… (cut to fit Telegram; the whole card is on the relay’s web page)</i>';

function render(card: Card, buttons: boolean, max: number): string[] {
  const clipped = (text: string) => (max === Infinity ? text : clip(text, max));
  const cut = (text: string) => escapeHtml(clipped(text));
  // Agents write markdown: a question's text and descriptions go as Telegram's HTML
  // (channels/markdown.ts); an approval's request (a command, a diff) stays exactly as sent.
  const rich = (text: string) => (card.kind === 'approval' ? cut(text) : markdownFor(TELEGRAM, clipped(text)));
  const lines = [`<b>${escapeHtml(heading(card))}</b>`];
  for (const q of questionTexts(card)) {
    const label = [q.number ? `${q.number}.` : '', q.header ? `<b>${escapeHtml(q.header)}</b> —` : ''].filter(Boolean).join(' ');
    lines.push('', `${label ? `${label} ` : ''}${rich(q.text)}${q.hint ? ` <i>(${q.hint})</i>` : ''}`);
    for (const o of q.options) {
      const description = o.description && max > 120 ? ` — <i>${rich(o.description)}</i>` : '';
      // With buttons the labels are on the buttons; descriptions and cut labels still need a place.
      if (buttons && !description && [...o.label].length <= BUTTON_LABEL_CHARS) continue;
      lines.push(`${buttons ? '•' : `${o.n}.`} ${cut(o.label)}${description}`);
    }
  }
  return lines;
}
