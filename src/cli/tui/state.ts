import type { Answer, AnswerEntry, Card, Question } from '../../cards/model.js';

// The terminal UI's state machine: pure. (state, input) → { state, effects }. The shell
// (tui-command.ts) turns key presses, relay events and API results into inputs, performs
// the effects and renders the state; nothing here does I/O or reads the clock.

export type KeyName = 'up' | 'down' | 'left' | 'right' | 'enter' | 'escape' | 'space' | 'backspace' | 'tab' | 'ctrl-c' | 'char';
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
}

export interface TuiState {
  /** Pending cards, oldest first. */
  cards: Card[];
  listIndex: number;
  open?: OpenCard;
  /** One line for the user: what just happened. */
  notice?: string;
  connection: Connection;
  quit?: boolean;
}

export type Effect =
  | { type: 'answer'; cardId: string; answers: Answer }
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

export const initialState = (): TuiState => ({ cards: [], listIndex: 0, connection: 'connecting' });

export type Entry = { kind: 'option'; label: string; description?: string } | { kind: 'other' } | { kind: 'skip' };

/** What the user can pick on a question, in order: its options, Other…, Skip. */
export function entries(q: Question): Entry[] {
  return [...q.options.map((o): Entry => ({ kind: 'option', label: o.label, description: o.description })), { kind: 'other' }, { kind: 'skip' }];
}

export const openCard = (s: TuiState): Card | undefined => (s.open ? s.cards.find((c) => c.id === s.open!.cardId) : undefined);

const byAge = (a: Card, b: Card) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
const clamp = (i: number, n: number) => Math.max(0, Math.min(i, n - 1));
const shortId = (id: string) => (id.length > 12 ? id.slice(0, 12) : id);

const STATUS_LINE: Record<string, string> = {
  answered: 'was answered elsewhere',
  skipped: 'was skipped elsewhere',
  expired: 'expired before it was answered',
  cancelled: 'was cancelled',
};

function startStep(card: Card, step: number, answers: Answer): OpenCard {
  const q = card.questions[step];
  // A question without options can only be answered in words: start typing at once.
  return { cardId: card.id, step, cursor: 0, checked: [], answers, ...(q.options.length === 0 ? { typing: '' } : {}) };
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
      const card = input.card;
      const verb = card.status === 'skipped' ? 'Skipped' : card.status === 'answered' ? 'Answered' : `Card is ${card.status}:`;
      const cards = s.cards.filter((c) => c.id !== card.id);
      const open = s.open?.cardId === card.id ? undefined : s.open;
      return { state: { ...s, cards, open, listIndex: clamp(s.listIndex, cards.length), notice: `${verb} ${shortId(card.id)}.` }, effects: [] };
    }
    case 'failed': {
      if (s.open?.cardId !== input.cardId) return { state: { ...s, notice: `Could not send: ${input.message}` }, effects: [] };
      const { sending: _sending, ...open } = s.open;
      return { state: { ...s, open, notice: `Could not send: ${input.message}` }, effects: [] };
    }
  }
}

function onCards(s: TuiState, list: Card[]): Step {
  const cards = list.filter((c) => c.status === 'pending').sort(byAge);
  let { open, notice } = s;
  if (open && !cards.some((c) => c.id === open!.cardId)) {
    notice = `Card ${shortId(open.cardId)} is no longer pending.`;
    open = undefined;
  }
  return { state: { ...s, cards, open, notice, listIndex: clamp(s.listIndex, cards.length) }, effects: [] };
}

function onCard(s: TuiState, card: Card): Step {
  const known = s.cards.some((c) => c.id === card.id);
  if (card.status === 'pending') {
    const cards = known ? s.cards.map((c) => (c.id === card.id ? card : c)) : [...s.cards, card].sort(byAge);
    return { state: { ...s, cards }, effects: [] };
  }
  if (!known) return { state: s, effects: [] };
  const cards = s.cards.filter((c) => c.id !== card.id);
  let { open, notice } = s;
  if (open?.cardId === card.id) {
    // Our own answer or skip coming back over the event stream: said when the POST returns.
    notice = open.sending ? `${card.status === 'skipped' ? 'Skipped' : 'Answered'} ${shortId(card.id)}.` : `Card ${shortId(card.id)} ${STATUS_LINE[card.status] ?? `is ${card.status}`}.`;
    open = undefined;
  } else if (!open) {
    notice = `Card ${shortId(card.id)} ${STATUS_LINE[card.status] ?? `is ${card.status}`}.`;
  }
  return { state: { ...s, cards, open, notice, listIndex: clamp(s.listIndex, cards.length) }, effects: [] };
}

function onKey(s: TuiState, key: Key): Step {
  if (key.name === 'ctrl-c') return { state: { ...s, quit: true }, effects: [{ type: 'quit' }] };
  const card = openCard(s);
  if (s.open && card) return onCardKey(s, s.open, card, key);
  return onListKey(s, key);
}

function onListKey(s: TuiState, key: Key): Step {
  const n = s.cards.length;
  const stay = { state: s, effects: [] };
  if (key.name === 'char' && key.ch === 'q') return { state: { ...s, quit: true }, effects: [{ type: 'quit' }] };
  if (n === 0) return stay;
  if (key.name === 'up') return { state: { ...s, listIndex: (s.listIndex - 1 + n) % n }, effects: [] };
  if (key.name === 'down' || key.name === 'tab') return { state: { ...s, listIndex: (s.listIndex + 1) % n }, effects: [] };
  let index: number | undefined;
  if (key.name === 'enter' || key.name === 'right') index = clamp(s.listIndex, n);
  if (key.name === 'char' && key.ch && /^[1-9]$/.test(key.ch) && Number(key.ch) <= n) index = Number(key.ch) - 1;
  if (index === undefined) return stay;
  const card = s.cards[index];
  return { state: { ...s, listIndex: index, open: startStep(card, 0, {}), notice: undefined }, effects: [] };
}

function onCardKey(s: TuiState, open: OpenCard, card: Card, key: Key): Step {
  if (open.sending) return { state: s, effects: [] };
  const q = card.questions[open.step];
  const list = entries(q);
  const set = (o: Partial<OpenCard>, notice?: string): Step => ({ state: { ...s, open: { ...open, ...o }, notice }, effects: [] });

  if (open.typing !== undefined) {
    if (key.name === 'escape') {
      // Back to the options; on a question without options, back to the list.
      if (q.options.length === 0) return { state: { ...s, open: undefined, notice: undefined }, effects: [] };
      const { typing: _t, ...rest } = open;
      return { state: { ...s, open: rest }, effects: [] };
    }
    if (key.name === 'backspace') return set({ typing: open.typing.slice(0, -1) });
    if (key.name === 'space') return set({ typing: `${open.typing} ` });
    if (key.name === 'char' && key.ch) return set({ typing: open.typing + key.ch });
    if (key.name === 'enter') {
      const text = open.typing.trim();
      if (!text && !(q.multiSelect && open.checked.length)) return set({}, 'Type an answer, or Esc to go back.');
      const entry: AnswerEntry = { selected: q.multiSelect ? open.checked : [], ...(text ? { text } : {}) };
      return advance(s, open, card, entry);
    }
    return { state: s, effects: [] };
  }

  if (key.name === 'escape') return { state: { ...s, open: undefined, notice: undefined }, effects: [] };
  if (key.name === 'up') return set({ cursor: (open.cursor - 1 + list.length) % list.length });
  if (key.name === 'down' || key.name === 'tab') return set({ cursor: (open.cursor + 1) % list.length });

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
