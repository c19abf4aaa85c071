import type { Answer, AnswerEntry, Card, Question } from '../../cards/model.js';
import { oneLine } from '../format.js';
import { LATE_USAGE, answerSummary, lateCommand, resolution, withNews, type Resolution } from './closed.js';

export type { Resolution } from './closed.js';

// The terminal UI's state machine: pure. (state, input) → { state, effects }. The shell
// (tui-command.ts) turns key presses, relay events and API results into inputs, performs
// the effects and renders the state; nothing here does I/O or reads the clock.

export type KeyName = 'up' | 'down' | 'left' | 'right' | 'enter' | 'escape' | 'space' | 'backspace' | 'tab' | 'pageup' | 'pagedown' | 'ctrl-c' | 'char';
export interface Key {
  name: KeyName;
  /** The typed character for name "char". */
  ch?: string;
}

export type Connection = 'connecting' | 'live' | 'lost';

export interface OpenCard {
  cardId: string;
  /** Index of the question shown (multi-question cards advance one at a time). */
  step: number;
  /** Index into the question's entries: its options, then Other…, then Skip. */
  cursor: number;
  /** Labels checked on a multi-select question. */
  checked: string[];
  /** Set while the user types free text (Other…). */
  typing?: string;
  /** Answers of the questions before `step`. */
  answers: Answer;
  /** An answer or skip is on its way to the relay. */
  sending?: 'answer' | 'skip';
  /** Lines the card is scrolled down by (PgUp/PgDn); unset: the view follows the cursor. */
  scroll?: number;
  /** Long lines wrapped in full instead of cut to the width (the e key). */
  expanded?: boolean;
}

export interface TuiState {
  /** Pending cards, oldest first. */
  cards: Card[];
  listIndex: number;
  open?: OpenCard;
  /** The card last left with Esc, with its draft: `/question` (or opening it) resumes it. */
  collapsed?: OpenCard;
  /** Every card's draft, kept while the tui runs: opening a card again resumes it. */
  drafts: Record<string, OpenCard>;
  /** The list view's input line: a `/command` or a typed reply. */
  input: string;
  /** A typed reply on its way to the relay (POST /api/cards/:id/reply). */
  replying?: { cardId: string; text: string };
  /** How the last few cards closed, oldest first (at most RESOLVED_KEPT). */
  resolved: Resolution[];
  /** One line for the user: what just happened. */
  notice?: string;
  connection: Connection;
  quit?: boolean;
}

export const RESOLVED_KEPT = 5;
/** Lines PgUp and PgDn move a card that is taller than the terminal. */
export const SCROLL_STEP = 10;
/** Typed on a question that takes only words: skips the card. */
export const SKIP_COMMAND = '/skip';

export type Effect =
  | { type: 'answer'; cardId: string; answers: Answer }
  | { type: 'reply'; cardId: string; text: string; late?: boolean }
  | { type: 'skip'; cardId: string }
  | { type: 'quit' };

export type Input =
  | { type: 'key'; key: Key }
  | { type: 'cards'; cards: Card[] }
  | { type: 'card'; card: Card }
  | { type: 'connection'; connection: Connection; reason?: string }
  | { type: 'sent'; card: Card }
  | { type: 'failed'; cardId: string; message: string };

export interface Step {
  state: TuiState;
  effects: Effect[];
}

export const initialState = (): TuiState => ({ cards: [], listIndex: 0, input: '', resolved: [], drafts: {}, connection: 'connecting' });

export type Entry = { kind: 'option'; label: string; description?: string } | { kind: 'other' } | { kind: 'skip' };

/** What the user can pick on a question, in order: its options, Other…, Skip. */
export function entries(q: Question): Entry[] {
  return [...q.options.map((o): Entry => ({ kind: 'option', label: o.label, description: o.description })), { kind: 'other' }, { kind: 'skip' }];
}

export const openCard = (s: TuiState): Card | undefined => (s.open ? s.cards.find((c) => c.id === s.open!.cardId) : undefined);

const byAge = (a: Card, b: Card) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
const clamp = (i: number, n: number) => Math.max(0, Math.min(i, n - 1));
const quit = (s: TuiState): Step => ({ state: { ...s, quit: true }, effects: [{ type: 'quit' }] });

/** A card in one line: its title, else "[header] question" of its first question. */
export function cardLabel(card: Card): string {
  const q = card.questions[0];
  return oneLine(card.title || (q?.header ? `[${q.header}] ${q.text}` : (q?.text ?? '')));
}

/** The card a typed reply (and a bare `/question`) goes to: the collapsed one, else the oldest. */
export function replyTarget(s: TuiState): Card | undefined {
  return (s.collapsed && s.cards.find((c) => c.id === s.collapsed!.cardId)) || s.cards[0];
}

/** How a card closed, as the one line kept in the list. `here`: by this tui. */
export function resolutionLine(card: Card, here: boolean): string {
  const answered = (lead: string) => {
    const text = answerSummary(card);
    return text ? `${lead}: ${text}` : `${lead}.`;
  };
  if (here) {
    if (card.status === 'answered') return answered(`Answered ${card.id}`);
    if (card.status === 'skipped') return `Skipped ${card.id}.`;
  }
  switch (card.status) {
    case 'answered':
      return answered(`Card ${card.id} was answered elsewhere`);
    case 'skipped':
      return `Card ${card.id} was skipped elsewhere.`;
    case 'expired':
      return `Card ${card.id} expired before it was answered.`;
    case 'cancelled':
      return `Card ${card.id} was cancelled.`;
    default:
      return `Card ${card.id} is ${card.status}.`;
  }
}

/** Keeps a card's resolution line (one per card; the newest wins) and drops the oldest beyond RESOLVED_KEPT. */
function remember(resolved: Resolution[], kept: Resolution): Resolution[] {
  return [...resolved.filter((r) => r.cardId !== kept.cardId), kept].slice(-RESOLVED_KEPT);
}

const withoutDraft = (drafts: Record<string, OpenCard>, cardId: string) => Object.fromEntries(Object.entries(drafts).filter(([id]) => id !== cardId));

/** State once a card is no longer pending: out of the list, not open, not collapsed, not being replied to. */
function closeCard(s: TuiState, kept: Resolution, notice: string | undefined): TuiState {
  const { cardId } = kept;
  const cards = s.cards.filter((c) => c.id !== cardId);
  return {
    ...s,
    cards,
    open: s.open?.cardId === cardId ? undefined : s.open,
    collapsed: s.collapsed?.cardId === cardId ? undefined : s.collapsed,
    drafts: withoutDraft(s.drafts, cardId),
    replying: s.replying?.cardId === cardId ? undefined : s.replying,
    resolved: remember(s.resolved, kept),
    notice,
    listIndex: clamp(s.listIndex, cards.length),
  };
}

function startStep(card: Card, step: number, answers: Answer): OpenCard {
  const q = card.questions[step];
  // A question without options can only be answered in words: start typing at once.
  // A tall card opens at its top (the question first); moving the cursor scrolls it along.
  return { cardId: card.id, step, cursor: 0, checked: [], answers, scroll: 0, ...(q.options.length === 0 ? { typing: '' } : {}) };
}

export function reduce(s: TuiState, input: Input): Step {
  switch (input.type) {
    case 'key':
      return onKey(s, input.key);
    case 'cards':
      return onCards(s, input.cards);
    case 'card':
      return onCard(s, input.card);
    case 'connection': {
      const notice =
        input.connection === 'lost'
          ? `Lost the relay${input.reason ? ` (${input.reason})` : ''}; reconnecting…`
          : input.connection === 'live' && s.connection === 'lost'
            ? 'Reconnected; reloaded the pending cards.'
            : s.notice;
      return { state: { ...s, connection: input.connection, notice }, effects: [] };
    }
    case 'sent': {
      const kept = resolution(input.card, resolutionLine(input.card, true));
      // Another card open: the line waits in the list, the open card is not disturbed.
      const notice = s.open && s.open.cardId !== input.card.id ? s.notice : kept.line;
      return { state: closeCard(s, kept, notice), effects: [] };
    }
    case 'failed': {
      if (s.replying?.cardId === input.cardId) {
        // The typed reply comes back to the input line, to be corrected and sent again.
        const text = s.input ? s.input : s.replying.text;
        return { state: { ...s, replying: undefined, input: text, notice: `Could not answer ${input.cardId}: ${input.message}` }, effects: [] };
      }
      if (s.open?.cardId !== input.cardId) return { state: { ...s, notice: `Could not send: ${input.message}` }, effects: [] };
      const { sending: _sending, ...open } = s.open;
      return { state: { ...s, open, notice: `Could not send: ${input.message}` }, effects: [] };
    }
  }
}

function onCards(s: TuiState, list: Card[]): Step {
  const cards = list.filter((c) => c.status === 'pending').sort(byAge);
  const pending = new Set(cards.map((c) => c.id));
  let { open, collapsed, resolved, notice } = s;
  // Cards that went away while the stream was down: why is not known here, only that they did.
  for (const gone of s.cards.filter((c) => !pending.has(c.id) && c.id !== s.replying?.cardId)) {
    if (!resolved.some((r) => r.cardId === gone.id)) resolved = remember(resolved, resolution(gone, `Card ${gone.id} is no longer pending.`));
  }
  if (open && !pending.has(open.cardId)) {
    notice = `Card ${open.cardId} is no longer pending.`;
    open = undefined;
  }
  if (collapsed && !pending.has(collapsed.cardId)) collapsed = undefined;
  const drafts = Object.fromEntries(Object.entries(s.drafts).filter(([id]) => pending.has(id)));
  return { state: { ...s, cards, open, collapsed, drafts, resolved, notice, listIndex: clamp(s.listIndex, cards.length) }, effects: [] };
}

function onCard(s: TuiState, card: Card): Step {
  const known = s.cards.some((c) => c.id === card.id);
  if (card.status === 'pending') {
    const cards = known ? s.cards.map((c) => (c.id === card.id ? card : c)) : [...s.cards, card].sort(byAge);
    return { state: { ...s, cards }, effects: [] };
  }
  if (!known) {
    const resolved = withNews(s.resolved, card);
    return { state: resolved ? { ...s, resolved } : s, effects: [] };
  }
  // Our own answer, skip or typed reply coming back over the event stream (maybe before the POST returns).
  const here = (s.open?.cardId === card.id && !!s.open.sending) || s.replying?.cardId === card.id;
  const kept = resolution(card, resolutionLine(card, here));
  // With another card open, the line waits in the list and the open card is not disturbed.
  const notice = s.open && s.open.cardId !== card.id ? s.notice : kept.line;
  return { state: closeCard(s, kept, notice), effects: [] };
}

function onKey(s: TuiState, key: Key): Step {
  if (key.name === 'ctrl-c') return quit(s);
  const card = openCard(s);
  if (s.open && card) return onCardKey(s, s.open, card, key);
  return onListKey(s, key);
}

/** Opens the card at `index` of the list; a card left earlier resumes its draft. */
function openAt(s: TuiState, index: number): Step {
  const card = s.cards[index];
  const draft = s.collapsed?.cardId === card.id ? s.collapsed : s.drafts[card.id];
  if (draft) {
    const collapsed = s.collapsed?.cardId === card.id ? undefined : s.collapsed;
    return { state: { ...s, listIndex: index, open: draft, collapsed, input: '', notice: undefined }, effects: [] };
  }
  return { state: { ...s, listIndex: index, open: startStep(card, 0, {}), input: '', notice: undefined }, effects: [] };
}

// The list view. On an empty input line a key is a command: ↑↓/Tab move, Enter or → opens
// the highlighted card, 1-9 opens that card when the list has that many, q quits. Any other
// character starts the input line; from then on every character is typed (↑↓ still move),
// Backspace deletes, Esc clears the line and Enter runs it: `/question [N]`, `/quit`, or a
// typed reply to the collapsed card (else the oldest).
function onListKey(s: TuiState, key: Key): Step {
  const n = s.cards.length;
  const stay = { state: s, effects: [] };
  const empty = s.input === '';
  if (key.name === 'up') return n ? { state: { ...s, listIndex: (s.listIndex - 1 + n) % n }, effects: [] } : stay;
  if (key.name === 'down' || key.name === 'tab') return n ? { state: { ...s, listIndex: (s.listIndex + 1) % n }, effects: [] } : stay;
  if (empty) {
    if (key.name === 'char' && key.ch === 'q') return quit(s);
    if ((key.name === 'enter' || key.name === 'right') && n) return openAt(s, clamp(s.listIndex, n));
    if (key.name === 'char' && key.ch && /^[1-9]$/.test(key.ch) && Number(key.ch) <= n) return openAt(s, Number(key.ch) - 1);
    if (key.name === 'enter' || key.name === 'backspace' || key.name === 'escape') return stay;
  }
  if (key.name === 'char' && key.ch) return { state: { ...s, input: s.input + key.ch }, effects: [] };
  if (key.name === 'space') return { state: { ...s, input: `${s.input} ` }, effects: [] };
  if (key.name === 'backspace') return { state: { ...s, input: s.input.slice(0, -1) }, effects: [] };
  if (key.name === 'escape') return { state: { ...s, input: '' }, effects: [] };
  if (key.name === 'enter') return submit(s);
  return stay;
}

export const QUESTION_USAGE = '/question reopens the waiting question; /question N opens the Nth card of the list.';

/** Enter on a non-empty input line. */
function submit(s: TuiState): Step {
  const text = s.input.trim();
  if (!text) return { state: { ...s, input: '' }, effects: [] };
  const command = /^\/(\S*)\s*(.*)$/.exec(text);
  if (command) {
    const [, name, arg] = command;
    const cleared = { ...s, input: '' };
    if (name.toLowerCase() === 'quit') return quit(cleared);
    if (name.toLowerCase() === 'late') {
      const { notice, reply } = lateCommand(arg);
      if (!reply) return { state: { ...s, notice }, effects: [] };
      return { state: { ...cleared, notice }, effects: [{ type: 'reply', ...reply, late: true }] };
    }
    if (name.toLowerCase() !== 'question') {
      // Kept on the line to be corrected. A reply that starts with "/" goes through Other… on the card.
      return { state: { ...s, notice: `Unknown command "/${name}". ${QUESTION_USAGE} ${LATE_USAGE} /quit quits. (To answer with text starting with "/", open the card and use Other….)` }, effects: [] };
    }
    if (s.cards.length === 0) return { state: { ...cleared, notice: 'No question is waiting.' }, effects: [] };
    if (!arg) {
      const target = replyTarget(s)!;
      return openAt(cleared, s.cards.indexOf(target));
    }
    const n = /^\d+$/.test(arg) ? Number(arg) : NaN;
    if (!(n >= 1 && n <= s.cards.length)) {
      const range = s.cards.length === 1 ? 'the list has 1 card' : `the list has ${s.cards.length} cards (1-${s.cards.length})`;
      return { state: { ...s, notice: `No card "${arg}": ${range}. ${QUESTION_USAGE}` }, effects: [] };
    }
    return openAt(cleared, n - 1);
  }
  const target = replyTarget(s);
  if (!target) return { state: { ...s, notice: 'No question is waiting; nothing to answer.' }, effects: [] };
  if (s.replying) return { state: { ...s, notice: `Still sending the reply to ${s.replying.cardId}…` }, effects: [] };
  return {
    state: { ...s, input: '', replying: { cardId: target.id, text }, notice: `Sending "${text}" to ${target.id}…` },
    effects: [{ type: 'reply', cardId: target.id, text }],
  };
}

/** Esc from a card: back to the list, the card (and its draft) kept as the collapsed one. */
function collapse(s: TuiState, open: OpenCard): Step {
  const index = s.cards.findIndex((c) => c.id === open.cardId);
  return { state: { ...s, open: undefined, collapsed: open, drafts: { ...s.drafts, [open.cardId]: open }, listIndex: index >= 0 ? index : s.listIndex, notice: undefined }, effects: [] };
}

function onCardKey(s: TuiState, open: OpenCard, card: Card, key: Key): Step {
  if (open.sending) return { state: s, effects: [] };
  const q = card.questions[open.step];
  const list = entries(q);
  const set = (o: Partial<OpenCard>, notice?: string): Step => ({ state: { ...s, open: { ...open, ...o }, notice }, effects: [] });

  const scrolled = scrollKey(s, open, key);
  if (scrolled) return scrolled;
  if (open.typing !== undefined) {
    if (key.name === 'escape') {
      // Back to the options; on a question without options, back to the list.
      if (q.options.length === 0) return collapse(s, open);
      const { typing: _t, ...rest } = open;
      return { state: { ...s, open: rest }, effects: [] };
    }
    // The answer line has no cursor to move: ← is the question before, as with the options.
    if (key.name === 'left' && open.step > 0) return back(s, open, card);
    if (key.name === 'backspace') return set({ typing: open.typing.slice(0, -1) });
    if (key.name === 'space') return set({ typing: `${open.typing} ` });
    if (key.name === 'char' && key.ch) return set({ typing: open.typing + key.ch });
    if (key.name === 'enter') {
      const text = open.typing.trim();
      if (q.options.length === 0 && text === SKIP_COMMAND) return { state: { ...s, open: { ...open, sending: 'skip' } }, effects: [{ type: 'skip', cardId: card.id }] };
      if (!text && !(q.multiSelect && open.checked.length)) return set({}, 'Type an answer, or Esc to go back.');
      const entry: AnswerEntry = { selected: q.multiSelect ? open.checked : [], ...(text ? { text } : {}) };
      return advance(s, open, card, entry);
    }
    return { state: s, effects: [] };
  }

  if (key.name === 'escape') return collapse(s, open);
  if (key.name === 'left' && open.step > 0) return back(s, open, card);
  if (key.name === 'char' && key.ch === 'e') return set({ expanded: !open.expanded });
  // Moving the cursor hands the scrolling back to it.
  if (key.name === 'up') return set({ cursor: (open.cursor - 1 + list.length) % list.length, scroll: undefined });
  if (key.name === 'down' || key.name === 'tab') return set({ cursor: (open.cursor + 1) % list.length, scroll: undefined });

  const choose = (index: number, viaNumber: boolean): Step => {
    const entry = list[index];
    if (entry.kind === 'skip') return { state: { ...s, open: { ...open, cursor: index, sending: 'skip' } }, effects: [{ type: 'skip', cardId: card.id }] };
    if (entry.kind === 'other') return set({ cursor: index, typing: '' });
    if (q.multiSelect) {
      if (viaNumber) return set({ cursor: index, checked: toggle(q, open.checked, entry.label) });
      // Enter sends what is checked; with nothing checked, the option under the cursor.
      return advance(s, { ...open, cursor: index }, card, { selected: open.checked.length ? open.checked : [entry.label] });
    }
    return advance(s, { ...open, cursor: index }, card, { selected: [entry.label] });
  };

  if (key.name === 'enter') return choose(open.cursor, false);
  if (key.name === 'space') {
    const entry = list[open.cursor];
    if (q.multiSelect && entry.kind === 'option') return set({ checked: toggle(q, open.checked, entry.label) });
    return choose(open.cursor, false);
  }
  if (key.name === 'char' && key.ch && /^[1-9]$/.test(key.ch) && Number(key.ch) <= list.length) return choose(Number(key.ch) - 1, true);
  return { state: s, effects: [] };
}

/** PgUp / PgDn: the card scrolls, the status line above it stays (render.ts). */
function scrollKey(s: TuiState, open: OpenCard, key: Key): Step | undefined {
  if (key.name !== 'pageup' && key.name !== 'pagedown') return undefined;
  const by = key.name === 'pagedown' ? SCROLL_STEP : -SCROLL_STEP;
  return { state: { ...s, open: { ...open, scroll: Math.max(0, (open.scroll ?? 0) + by) } }, effects: [] };
}

/** ← on a later question: the one before it again, with what was answered there. */
function back(s: TuiState, open: OpenCard, card: Card): Step {
  const step = open.step - 1;
  const q = card.questions[step];
  const { [q.id]: given, ...answers } = open.answers;
  const again = startStep(card, step, answers);
  if (given) {
    const first = q.options.findIndex((o) => given.selected.includes(o.label));
    if (q.multiSelect) again.checked = given.selected;
    if (first >= 0) again.cursor = first;
    if (given.text) again.typing = given.text;
  }
  return { state: { ...s, open: again, notice: undefined }, effects: [] };
}

/** Toggles a label, keeping the checked labels in the question's option order. */
function toggle(q: Question, checked: string[], label: string): string[] {
  const next = checked.includes(label) ? checked.filter((l) => l !== label) : [...checked, label];
  return q.options.map((o) => o.label).filter((l) => next.includes(l));
}

/** Records this question's entry; the next question, or the whole answer when it was the last. */
function advance(s: TuiState, open: OpenCard, card: Card, entry: AnswerEntry): Step {
  const q = card.questions[open.step];
  const answers = { ...open.answers, [q.id]: entry };
  if (open.step + 1 < card.questions.length) {
    return { state: { ...s, open: startStep(card, open.step + 1, answers), notice: undefined }, effects: [] };
  }
  return { state: { ...s, open: { ...open, answers, sending: 'answer' }, notice: undefined }, effects: [{ type: 'answer', cardId: card.id, answers }] };
}
