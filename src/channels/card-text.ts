import { asAnswered } from '../cards/answer.js';
import type { Card, Question } from '../cards/model.js';
import { clip } from '../cards/text.js';

// What a card says in a chat, the same words on every channel (each channel adds its own
// markup and buttons). Pure: no I/O.

/** Native buttons for one question with one choice; everything else is text to reply to. */
export function takesButtons(card: Card): boolean {
  const [q] = card.questions;
  return card.questions.length === 1 && card.layout === 'steps' && !q.multiSelect && q.options.length > 0;
}

/**
 * A heading longer than this is cut: a title of thousands of characters would leave no room
 * for the question itself in a platform's message (and Discord's bold around it unclosed).
 */
export const HEADING_CHARS = 256;

/** The line above the question: the card's title, else the question's header, cut to HEADING_CHARS. */
export function heading(card: Card): string {
  const first = card.questions[0];
  const title = card.title?.trim() || (card.questions.length === 1 ? first?.header?.trim() : '') || '';
  const kind = card.kind === 'approval' ? 'Approval needed' : 'Question';
  return clip(title ? `${kind}: ${title}` : kind, HEADING_CHARS);
}

export interface QuestionText {
  /** "1." before each question when there are several. */
  number?: number;
  header?: string;
  text: string;
  /** Numbered options (text replies) or plain ones (buttons carry the numbers). */
  options: { n: number; label: string; description?: string }[];
  hint?: string;
}

export function questionTexts(card: Card): QuestionText[] {
  const several = card.questions.length > 1;
  return card.questions.map((q, i) => ({
    ...(several ? { number: i + 1 } : {}),
    ...(several && q.header?.trim() ? { header: q.header.trim() } : {}),
    text: q.text,
    options: q.options.map((o, n) => ({ n: n + 1, label: o.label, ...(o.description ? { description: o.description } : {}) })),
    ...(hintOf(q, card) ? { hint: hintOf(q, card) } : {}),
  }));
}

function hintOf(q: Question, card: Card): string | undefined {
  if (q.field?.type === 'number') return 'a number';
  if (q.field?.type === 'boolean') return 'yes or no';
  if (q.multiSelect || (card.selectSeveral && q.options.length > 1)) return 'pick one or more';
  return undefined;
}

/**
 * How to answer in text. `where` is the channel's way to reply ("Reply to this message",
 * "Reply in this thread").
 */
export function howToReply(card: Card, where: string): string {
  if (takesButtons(card)) {
    return card.questions[0].freeText ? `Tap an option, or ${lower(where)} with your own answer.` : 'Tap an option.';
  }
  if (card.questions.length > 1) {
    const q = card.questions[0];
    return `${where} with one line per question, in order, or keyed like "1: …" or "${q.id}: …".`;
  }
  const q = card.questions[0];
  if (!q.options.length) return `${where} with your answer.`;
  const several = q.multiSelect || card.selectSeveral ? ' (several separated by commas)' : '';
  const own = q.freeText ? ', or with your own answer' : '';
  return `${where} with an option's number or name${several}${own}.`;
}

/** The closing line a card's message is edited to: "Answered: PostgreSQL", "Expired". Typed text is never repeated. */
export function closedLine(card: Card): string {
  switch (card.status) {
    case 'answered':
      return `Answered: ${answerSummary(card)}`;
    case 'skipped':
      return 'Skipped';
    case 'expired':
      return 'Expired';
    case 'cancelled':
      return 'Cancelled';
    default:
      return 'Waiting for an answer';
  }
}

/** The picked labels; typed text only as "a written answer" (it may be private). */
export function answerSummary(card: Card): string {
  const parts = card.questions.map((q) => {
    const entry = card.answer?.[q.id];
    const picked = entry?.selected ?? [];
    const typed = entry?.text?.trim() ? (picked.length ? ' + a written note' : 'a written answer') : '';
    const value = `${picked.join(', ')}${typed}` || 'no answer';
    return card.questions.length > 1 ? `${q.header?.trim() || q.id}: ${value}` : value;
  });
  return parts.join('; ');
}

/** What a person is told when the card they acted on is closed. */
export function closedNotice(card: Card): string {
  switch (card.status) {
    case 'answered':
      return `Already answered: ${answerSummary(card)}.`;
    case 'expired':
      return card.lateAnswer
        ? `This question expired, and was answered late: ${answerSummary(asAnswered(card))}.`
        : 'This question expired; nobody is waiting for the answer any more. To answer it anyway, reply to its message (where this chat allows) or use Answer anyway on the relay\'s page.';
    case 'skipped':
      return 'This question was skipped.';
    case 'cancelled':
      return card.lateAnswer
        ? `This question was cancelled, and was answered late: ${answerSummary(asAnswered(card))}.`
        : 'This question was cancelled: the agent stopped waiting. To answer it anyway, reply to its message (where this chat allows) or use Answer anyway on the relay\'s page.';
    default:
      return 'This question is still open.';
  }
}

/**
 * Platforms count their limits in code points or in UTF-16 units (Slack's docs do not say
 * which); cutting by UTF-16 units is within either count.
 */
export { clip } from '../cards/text.js';

const lower = (text: string) => text.charAt(0).toLowerCase() + text.slice(1);
