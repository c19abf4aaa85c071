import type { Card } from '../../cards/model.js';
import { clip, closedLine, heading, howToReply, questionTexts, takesButtons, type QuestionText } from '../card-text.js';
import { SLACK, escapeMarkup, markdownFor } from '../markdown.js';

// A card as a Slack message (Block Kit). Pure: no I/O.
// One question with one choice gets Block Kit buttons; everything else is mrkdwn text with
// numbered options, answered by replying in the message's thread. `text` is the fallback
// Slack shows in notifications and where blocks cannot be drawn.

/** Slack refuses a button whose text is longer than this. */
export const BUTTON_TEXT_CHARS = 75;
/** Slack refuses an actions block with more elements than this. */
export const ACTIONS_PER_BLOCK = 25;
/** Slack refuses a section's text longer than this. */
export const SECTION_TEXT_CHARS = 3000;
/** Slack refuses a header block's text longer than this. */
export const HEADER_TEXT_CHARS = 150;
/** The fallback text; Slack advises staying under 4,000 characters. */
export const FALLBACK_TEXT_CHARS = 3000;
/**
 * The text all of a message's blocks may hold together: Slack refuses about 12,000
 * (`msg_blocks_too_long`, not in its docs); askrelay keeps a margin under it.
 */
export const BLOCKS_TEXT_CHARS = 11_000;
/** Where a message cut to fit says the rest is. */
export const CUT_NOTE = '… (cut to fit Slack; the whole card is on the relay’s web page)';

export const ACTION_PREFIX = 'askrelay_opt_';

export interface PlainText {
  type: 'plain_text';
  text: string;
  emoji: true;
}
export interface Mrkdwn {
  type: 'mrkdwn';
  text: string;
}
export interface SlackButton {
  type: 'button';
  text: PlainText;
  action_id: string;
  value: string;
}
export type SlackBlock =
  | { type: 'header'; text: PlainText }
  | { type: 'section'; text: PlainText | Mrkdwn }
  | { type: 'actions'; elements: SlackButton[] }
  | { type: 'context'; elements: (PlainText | Mrkdwn)[] };

/** What chat.postMessage and chat.update get besides the channel (and ts). */
export interface SlackMessage {
  text: string;
  blocks: SlackBlock[];
}

/** A button's value: which card, which option (0-based). */
export function encodeValue(cardId: string, option: number): string {
  return `${cardId}:${option}`;
}

/** The card and option a tapped button stands for; undefined for anything not ours. */
export function decodeAction(action: { action_id: string; value?: string }): { cardId: string; option: number } | undefined {
  if (!action.action_id.startsWith(ACTION_PREFIX) || !action.value) return undefined;
  const match = /^([\w-]+):(\d{1,3})$/.exec(action.value);
  return match ? { cardId: match[1], option: Number(match[2]) } : undefined;
}

/** Slack's mrkdwn needs only these three escaped; escaping also keeps `<!channel>` from pinging anyone. */
export const escapeMrkdwn = escapeMarkup;

/** The card as posted. */
export function postOf(card: Card): SlackMessage {
  const buttons = takesButtons(card);
  const tail: SlackBlock[] = [...(buttons ? actionsOf(card) : []), { type: 'context', elements: [mrkdwn(howToReply(card, 'Reply in this thread'))] }];
  return { text: fallbackOf(card), blocks: fitted(card, buttons ? 'buttons' : 'text', tail) };
}

/** The card's message once it closed: the question stays, the buttons go, the outcome is added. */
export function closedOf(card: Card): SlackMessage {
  const line = closedLine(card);
  const blocks = fitted(card, 'closed', [section(`*${escapeMrkdwn(line)}*`)]);
  return { text: clipMrkdwn(escapeMrkdwn(`${line}\n${fallbackLine(card)}`), FALLBACK_TEXT_CHARS), blocks };
}

/**
 * The heading, the questions and `tail`, within BLOCKS_TEXT_CHARS: question texts and
 * descriptions are cut in steps; if that is not enough (many long labels), the questions that
 * fit are kept and a note says where the rest is.
 */
function fitted(card: Card, mode: Mode, tail: SlackBlock[]): SlackBlock[] {
  const questions = questionTexts(card);
  for (const max of [Infinity, 1000, 300, 120]) {
    const blocks = [headerOf(card), ...questions.map((q) => section(questionBody(card, q, mode, max))), ...tail];
    if (blocksText(blocks) <= BLOCKS_TEXT_CHARS) return blocks;
  }
  const note: SlackBlock = { type: 'context', elements: [mrkdwn(CUT_NOTE)] };
  const kept: SlackBlock[] = [headerOf(card)];
  let size = blocksText([...kept, note, ...tail]);
  for (const q of questions) {
    const block = section(questionBody(card, q, mode, 120));
    size += blocksText([block]);
    if (size > BLOCKS_TEXT_CHARS) break;
    kept.push(block);
  }
  return [...kept, note, ...tail];
}

/** The text a message's blocks hold, in UTF-16 units, as Slack's block limits count. */
export function blocksText(blocks: readonly SlackBlock[]): number {
  return blocks.reduce((sum, b) => {
    if (b.type === 'header' || b.type === 'section') return sum + b.text.text.length;
    if (b.type === 'actions') return sum + b.elements.reduce((n, e) => n + e.text.text.length, 0);
    return sum + b.elements.reduce((n, e) => n + e.text.length, 0);
  }, 0);
}

function headerOf(card: Card): SlackBlock {
  return { type: 'header', text: plain(clip(heading(card), HEADER_TEXT_CHARS)) };
}

/**
 * One question: its number and header when there are several, its text, and its options —
 * numbered when answered in text; with buttons only those whose description or cut label
 * needs a place; none once closed.
 */
type Mode = 'buttons' | 'text' | 'closed';

function questionBody(card: Card, q: QuestionText, mode: Mode, max = Infinity): string {
  const hint = q.hint && mode !== 'closed' ? ` _(${q.hint})_` : '';
  // Agents write markdown: a question's text and descriptions go as mrkdwn (channels/markdown.ts);
  // an approval's request (a command, a diff) stays exactly as sent. Cut before the markup is made.
  const cut = (t: string) => (max === Infinity ? t : clip(t, max));
  const rich = (t: string) => (card.kind === 'approval' ? escapeMrkdwn(cut(t)) : markdownFor(SLACK, cut(t)));
  const text = `${rich(q.text)}${hint}`;
  // "*1. Header*" above the text, or just "*1.*" before it.
  const lines = q.header ? [`*${q.number}. ${escapeMrkdwn(q.header)}*`, text] : [q.number ? `*${q.number}.* ${text}` : text];
  if (mode === 'closed') return lines.join('\n');
  for (const o of q.options) {
    const description = o.description ? ` — ${rich(o.description)}` : '';
    // Slack counts in UTF-16 units (the safe side): a label its button must cut is listed whole here.
    if (mode === 'buttons' && !description && o.label.length <= BUTTON_TEXT_CHARS) continue;
    lines.push(`${mode === 'buttons' ? '•' : `*${o.n}.*`} ${escapeMrkdwn(o.label)}${description}`);
  }
  return lines.join('\n');
}

/** One button per option, at most 25 to an actions block. */
function actionsOf(card: Card): SlackBlock[] {
  const buttons: SlackButton[] = card.questions[0].options.map((o, option) => ({
    type: 'button',
    text: plain(clip(o.label, BUTTON_TEXT_CHARS)),
    action_id: `${ACTION_PREFIX}${option}`,
    value: encodeValue(card.id, option),
  }));
  const blocks: SlackBlock[] = [];
  for (let i = 0; i < buttons.length; i += ACTIONS_PER_BLOCK) blocks.push({ type: 'actions', elements: buttons.slice(i, i + ACTIONS_PER_BLOCK) });
  return blocks;
}

/** What a notification shows: the heading and the (first) question. */
function fallbackOf(card: Card): string {
  return clipMrkdwn(escapeMrkdwn(fallbackLine(card)), FALLBACK_TEXT_CHARS);
}

function fallbackLine(card: Card): string {
  const more = card.questions.length > 1 ? ` (+${card.questions.length - 1} more)` : '';
  return `${heading(card)}\n${card.questions[0]?.text ?? ''}${more}`;
}

const plain = (text: string): PlainText => ({ type: 'plain_text', text, emoji: true });
const mrkdwn = (text: string): Mrkdwn => ({ type: 'mrkdwn', text: clipMrkdwn(escapeMrkdwn(text), SECTION_TEXT_CHARS) });
const section = (text: string): SlackBlock => ({ type: 'section', text: { type: 'mrkdwn', text: clipMrkdwn(text, SECTION_TEXT_CHARS) } });

/** Cuts escaped mrkdwn without leaving half an entity (`&am…`) behind. */
function clipMrkdwn(text: string, max: number): string {
  const cut = clip(text, max);
  return cut === text ? text : cut.replace(/&[a-z]{0,3}…$/, '…');
}
