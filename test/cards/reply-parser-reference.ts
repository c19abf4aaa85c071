// The reply parser as it was before issue 13 (cubic in the number of comma parts), kept
// as the reference the linear parser must agree with on small replies. Only its messages
// changed since (issue 17: a question is named by its header or text, not its id); the
// refusal of slips (ambiguous_reply) is not in it, reply-parser.test.ts allows for that.
import { named, notAnOption, questionList } from '../../src/cards/near-miss.js';
import { RelayError } from '../../src/errors.js';
import type { Answer, AnswerEntry, Card, Question } from '../../src/cards/model.js';

// What a person typed, read as the answer to a card: OpenClaw's plain-text rules
// (docs/api.md, `POST /api/cards/:id/reply`), used by every surface where a person types.
//
// One question:
//   - the whole text is an option's label (any case, trimmed) → that option;
//   - a 1-based number → that option (a label that is itself a number wins);
//   - a list split on "," ";" or newline whose every part is an option → those options
//     (on a single-choice question only when the card lets the user select several);
//   - on a multi-select question, parts that are options are picked and the rest is
//     free text; consecutive parts that together spell a label ("Salt, pepper") pick it;
//   - anything else is free text, when the question takes free text.
// Several questions: keyed lines (`id: v`, `id = v`, `header: v`, `2: v`; a line
// without a key continues the value of the key above it), or one line per question in
// order. A URL, a path or a time like 14:30 is never split and never read as a key.

const fail = (message: string): never => {
  throw new RelayError('invalid_answer', message);
};

/** The option a piece of text names: its label in any case, or its 1-based number. */
function matchOption(q: Question, piece: string): string | undefined {
  const v = piece.trim().toLowerCase();
  if (!v) return undefined;
  const byLabel = q.options.find((o) => o.label.trim().toLowerCase() === v);
  if (byLabel) return byLabel.label;
  if (!/^\d+$/.test(v)) return undefined;
  const n = Number(v);
  return n >= 1 && n <= q.options.length ? q.options[n - 1].label : undefined;
}

// A whitespace-free run that is a URL or a path keeps its inner "," ";" and ":".
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;
const PATH_LIKE = /^(?:~?\.{0,2}\/|[a-z]:[\\/]|\\\\)|\\/i;

function isProtected(token: string): boolean {
  return URL_LIKE.test(token) || PATH_LIKE.test(token);
}

interface Part {
  start: number;
  end: number;
}

/** Splits on "," ";" and newlines, never inside a URL or a path; empty parts dropped. */
function splitList(text: string): Part[] {
  const kept = new Set<number>();
  for (const m of text.matchAll(/\S+/g)) {
    if (!isProtected(m[0])) continue;
    // A separator that ends the token ("https://x.org, Red") still separates.
    for (let i = m.index; i < m.index + m[0].length - 1; i++) kept.add(i);
  }
  const parts: Part[] = [];
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i === text.length || (/[,;\n]/.test(text[i]) && !kept.has(i))) {
      if (text.slice(start, i).trim()) parts.push({ start, end: i });
      start = i + 1;
    }
  }
  return parts;
}

/** Reads a list: the longest run of consecutive parts that spells an option wins. */
function readList(q: Question, text: string): { picked: string[]; rest: string[] } {
  const parts = splitList(text);
  const picked: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < parts.length; ) {
    let j = parts.length - 1;
    let label: string | undefined;
    for (; j >= i; j--) {
      label = matchOption(q, text.slice(parts[i].start, parts[j].end));
      if (label) break;
    }
    if (label) {
      picked.push(label);
      i = j + 1;
    } else {
      rest.push(text.slice(parts[i].start, parts[i].end).trim());
      i++;
    }
  }
  return { picked, rest };
}

function inOptionOrder(q: Question, labels: string[]): string[] {
  const set = new Set(labels);
  return q.options.map((o) => o.label).filter((l) => set.has(l));
}

function freeText(q: Question, text: string): AnswerEntry {
  if (q.freeText) return { selected: [], text };
  return q.options.length
    ? fail(notAnOption(q, text))
    : fail(`Question ${named(q)} takes no free text and has no options to pick.`);
}

/** The answer to one question from the text typed for it (no keys are read here). */
export function parseEntry(card: Card, q: Question, text: string): AnswerEntry {
  const t = text.trim();
  if (!t) return fail(`The answer to question ${named(q)} is empty: give a number, a label or some text.`);
  const whole = matchOption(q, t);
  if (whole) return { selected: [whole] };

  const { picked, rest } = readList(q, t);
  const selected = inOptionOrder(q, picked);
  if (q.multiSelect) {
    if (!selected.length) return freeText(q, t);
    if (!rest.length) return { selected };
    return { ...freeText(q, rest.join(', ')), selected };
  }
  // A single-choice question: only a text that lists nothing but options is a list.
  if (selected.length > 1 && !rest.length) {
    if (card.selectSeveral) return { selected };
    return fail(`Question ${named(q)} takes one choice; ${selected.length} were picked.`);
  }
  if (selected.length === 1 && !rest.length) return { selected };
  return freeText(q, t);
}

interface Keyed {
  question: Question;
  value: string;
}

/** The question a line names before ":" or "=", with the rest of the line; undefined when it names none. */
function readKey(card: Card, line: string): Keyed | undefined {
  const m = /^\s*([^:=\n]+?)\s*([:=])(.*)$/.exec(line);
  if (!m) return undefined;
  const [, key, sep, value] = m;
  if (sep === ':' && /^(?:\/\/|[\\/])/.test(value)) return undefined; // https://…, C:\…, C:/…
  if (sep === ':' && /^\d+$/.test(key) && /^\d/.test(value)) return undefined; // 14:30
  if (isProtected(key)) return undefined; // /usr/bin:x
  const k = key.trim().toLowerCase();
  const question =
    card.questions.find((q) => q.id === key.trim()) ??
    card.questions.find((q) => q.id.toLowerCase() === k || q.header?.trim().toLowerCase() === k) ??
    (/^\d+$/.test(k) ? card.questions[Number(k) - 1] : undefined);
  return question ? { question, value } : undefined;
}

const keyOf = (card: Card, q: Question) => q.header?.trim() || String(card.questions.indexOf(q) + 1);

function missing(card: Card, answered: Set<Question>, how: (key: string) => string): never {
  const q = card.questions.find((x) => !answered.has(x))!;
  return fail(`Question ${named(q)} has no answer; ${how(keyOf(card, q))} (questions: ${questionList(card)}).`);
}

/** Reads a whole plain-text reply to a card; throws invalid_answer with one sentence when it cannot. */
export function parseReply(card: Card, text: string): Answer {
  const lines = text.split(/\r?\n/);
  const filled = lines.filter((l) => l.trim());
  if (!filled.length) return fail('The reply is empty: give a number, a label or some text.');

  const keys = lines.map((l) => readKey(card, l));
  const firstFilled = lines.findIndex((l) => l.trim());
  const keyed = card.questions.length === 1 ? keys[firstFilled] !== undefined : keys.some(Boolean);

  if (!keyed) {
    if (card.questions.length === 1) {
      const q = card.questions[0];
      return { [q.id]: parseEntry(card, q, text) };
    }
    if (filled.length < card.questions.length) {
      missing(card, new Set(card.questions.slice(0, filled.length)), () => `the reply has ${filled.length} line${filled.length === 1 ? '' : 's'} for ${card.questions.length} questions: give one line per question, or key each line ("${keyOf(card, card.questions[0])}: …")`);
    }
    if (filled.length > card.questions.length) {
      fail(`The reply has ${filled.length} lines for ${card.questions.length} questions: give one line per question, or key each line ("${keyOf(card, card.questions[0])}: …").`);
    }
    return Object.fromEntries(card.questions.map((q, i) => [q.id, parseEntry(card, q, filled[i])]));
  }

  // Keyed lines; a line without a key continues the value above it.
  const values = new Map<Question, string[]>();
  let current: Question | undefined;
  lines.forEach((line, i) => {
    const key = keys[i];
    if (key) {
      current = key.question;
      values.set(current, [...(values.get(current) ?? []), key.value]);
    } else if (line.trim()) {
      if (!current) fail(`The line "${line.trim()}" names no question; start it with a question's header, number or id and ":" (questions: ${questionList(card)}).`);
      values.get(current!)!.push(line);
    }
  });
  const answered = new Set([...values].filter(([, v]) => v.join('\n').trim()).map(([q]) => q));
  if (answered.size < card.questions.length) missing(card, answered, (key) => `add a line for it ("${key}: …")`);
  return Object.fromEntries(card.questions.map((q) => [q.id, parseEntry(card, q, values.get(q)!.join('\n'))]));
}
