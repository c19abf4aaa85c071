import { RelayError } from '../errors.js';
import { LIMITS, type Answer, type AnswerEntry, type Card, type Question } from './model.js';
import { named, notAnOption, questionList, refuseSlip } from './near-miss.js';
import { parseOpenclawReply } from './reply-openclaw.js';

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
//   - anything else is free text, when the question takes free text; but a reply (or, on
//     a multi-select question, a part of it) that is only a number or one edit away from
//     a label of 4+ characters is refused as ambiguous_reply, listing the options, unless
//     the reply is marked as text (near-miss.ts).
// Marked as text (`asText`), each question's whole value is free text: nothing is picked.
// Questions are named by header, else text, never by id (near-miss.ts, questionName).
// Several questions: keyed lines (`id: v`, `id = v`, `id - v`, `header: v`, `question
// text: v`, `2: v`; a line without a key continues the value of the key above it), or one
// line per question in order. A URL, a path or a time like 14:30 is never split and never
// read as a key. Cards asked through OpenClaw's ask_user follow OpenClaw's rules instead
// (reply-openclaw.ts).

const fail = (message: string): never => {
  throw new RelayError('invalid_answer', message);
};

/** A reply over the answer limit is refused before any of it is read. */
function checkLength(text: string): void {
  if (text.length > LIMITS.answerTextChars) {
    fail(`The reply is ${text.length} characters long; at most ${LIMITS.answerTextChars} are read. Shorten it.`);
  }
}

/** How a reply is read: `asText` takes every value as typed words, never as options. */
export interface ReplyOptions {
  asText?: boolean;
}

// A question's labels as a trie of their lowercased, trimmed spellings. Reading a list
// walks it from each part on: a run of parts can spell a label only while it stays on the
// trie, so no run is ever read further than the longest label (issue 13: trying every run
// of parts made a reply's cost grow with the cube of its parts).
interface Node {
  next: Map<string, Node>;
  /** The label spelled by the path to this node (the first option, should two spell it alike). */
  label?: string;
}

function labelTrie(q: Question): Node {
  const root: Node = { next: new Map() };
  for (const option of q.options) {
    let node = root;
    const key = option.label.trim().toLowerCase();
    // By UTF-16 unit, as walk() reads.
    for (let i = 0; i < key.length; i++) {
      const ch = key[i];
      let child = node.next.get(ch);
      if (!child) node.next.set(ch, (child = { next: new Map() }));
      node = child;
    }
    node.label ??= option.label;
  }
  return root;
}

/** The node `text[from, to)` leads to from `node`, or undefined when it leaves the trie. */
function walk(node: Node | undefined, text: string, from = 0, to = text.length): Node | undefined {
  for (let i = from; node && i < to; i++) node = node.next.get(text[i]);
  return node;
}

/** The option a 1-based number names; `v` is trimmed. */
function byNumber(q: Question, v: string): string | undefined {
  if (!/^\d+$/.test(v)) return undefined;
  const n = Number(v);
  return n >= 1 && n <= q.options.length ? q.options[n - 1].label : undefined;
}

/** The option a piece of text names: its label in any case, or its 1-based number. */
function matchOption(q: Question, trie: Node, piece: string): string | undefined {
  const v = piece.trim().toLowerCase();
  if (!v) return undefined;
  return walk(trie, v)?.label ?? byNumber(q, v);
}

// A whitespace-free run that is a URL or a path keeps its inner "," ";" and ":".
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;
const PATH_LIKE = /^(?:~?\.{0,2}\/|[a-z]:[\\/]|\\\\)|\\/i;

function isProtected(token: string): boolean {
  return URL_LIKE.test(token) || PATH_LIKE.test(token);
}

/** A part of a list: `text[start, end)`, trimmed, never empty. */
interface Part {
  start: number;
  end: number;
}

const SEPARATOR = /[,;\n]/;

/** Splits on "," ";" and newlines, never inside a URL or a path; empty parts dropped. */
function splitList(text: string): Part[] {
  const kept = new Uint8Array(text.length);
  for (const m of text.matchAll(/\S+/g)) {
    if (!isProtected(m[0])) continue;
    // A separator that ends the token ("https://x.org, Red") still separates.
    kept.fill(1, m.index, m.index + m[0].length - 1);
  }
  const parts: Part[] = [];
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i === text.length || (SEPARATOR.test(text[i]) && !kept[i])) {
      const raw = text.slice(start, i);
      const trimmed = raw.trim();
      if (trimmed) {
        const lead = raw.length - raw.trimStart().length;
        parts.push({ start: start + lead, end: start + lead + trimmed.length });
      }
      start = i + 1;
    }
  }
  return parts;
}

/**
 * Reads a list: the longest run of consecutive parts that spells an option wins. A run's
 * lowercase spelling is its parts' lowercase spellings with the separators between them
 * as typed (lowercasing does not reach across a separator), so each run extends the walk
 * of the one before it.
 */
function readList(q: Question, trie: Node, text: string): { picked: string[]; rest: string[] } {
  const parts = splitList(text);
  const lower = parts.map((p) => text.slice(p.start, p.end).toLowerCase());
  const picked: string[] = [];
  const rest: string[] = [];
  for (let i = 0; i < parts.length; ) {
    let node = walk(trie, lower[i]);
    let label = node?.label ?? byNumber(q, lower[i]);
    let last = i;
    for (let j = i + 1; node && j < parts.length; j++) {
      node = walk(walk(node, text, parts[j - 1].end, parts[j].start), lower[j]);
      if (node?.label) {
        label = node.label;
        last = j;
      }
    }
    if (label) {
      picked.push(label);
      i = last + 1;
    } else {
      rest.push(text.slice(parts[i].start, parts[i].end));
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
  return q.options.length ? fail(notAnOption(q, text)) : fail(`Question ${named(q)} takes no free text and has no options to pick.`);
}

/** The answer to one question from the text typed for it (no keys are read here). */
export function parseEntry(card: Card, q: Question, text: string, { asText = false }: ReplyOptions = {}): AnswerEntry {
  checkLength(text);
  const t = text.trim();
  if (!t) return fail(`The answer to question ${named(q)} is empty: give a number, a label or some text.`);
  if (asText) return freeText(q, t);
  const trie = labelTrie(q);
  const whole = matchOption(q, trie, t);
  if (whole) return { selected: [whole] };

  const { picked, rest } = readList(q, trie, t);
  const selected = inOptionOrder(q, picked);
  if (q.multiSelect) {
    refuseSlip(q, t, rest, true);
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
  refuseSlip(q, t, rest, false);
  return freeText(q, t);
}

interface Keyed {
  question: Question;
  value: string;
}

/** The question a key names: its id (exactly, then in any case), header or text, or (`byNumber`) its 1-based number. */
function questionNamed(card: Card, key: string, byNumber: boolean): Question | undefined {
  const k = key.toLowerCase();
  return (
    card.questions.find((q) => q.id === key) ??
    card.questions.find((q) => q.id.toLowerCase() === k || q.header?.trim().toLowerCase() === k || q.text.trim().toLowerCase() === k) ??
    (byNumber && /^\d+$/.test(k) ? card.questions[Number(k) - 1] : undefined)
  );
}

/**
 * The question a line names before ":" or "=" (or before a spaced " - ", when what stands
 * before it is a question's id, header or text, never a number: "2 - 3 days" stays a value),
 * with the rest of the line; undefined when it names none.
 */
function readKey(card: Card, line: string): Keyed | undefined {
  const keyed = readColonKey(card, line);
  if (keyed) return keyed;
  // The first spaced hyphen, found by index (a lazy pattern before it cost the square of a long line).
  const at = line.search(/\s-\s/);
  if (at < 0) return undefined;
  const key = line.slice(0, at).trim();
  const value = line.slice(at + 3);
  const question = key && !/[\r\u2028\u2029]/.test(value) ? questionNamed(card, key, false) : undefined;
  return question ? { question, value } : undefined;
}

function readColonKey(card: Card, line: string): Keyed | undefined {
  // The key is everything before the first ":" or "=", trimmed. (Found by index: a lazy
  // regex over the key cost the square of a long line without one.)
  const at = line.search(/[:=]/);
  if (at < 0) return undefined;
  const key = line.slice(0, at).trim();
  const sep = line[at];
  const value = line.slice(at + 1);
  // A lone \r or a line separator ends a line as the old pattern's `(.*)$` read it: no key then.
  if (!key || /[\r\u2028\u2029]/.test(value)) return undefined;
  if (sep === ':' && /^(?:\/\/|[\\/])/.test(value)) return undefined; // https://…, C:\…, C:/…
  if (sep === ':' && /^\d+$/.test(key) && /^\d/.test(value)) return undefined; // 14:30
  if (isProtected(key)) return undefined; // /usr/bin:x
  const question = questionNamed(card, key, true);
  return question ? { question, value } : undefined;
}

/** The key a reply line may start with for this question: its header, else its number. */
const keyOf = (card: Card, q: Question) => q.header?.trim() || String(card.questions.indexOf(q) + 1);


function missing(card: Card, answered: Set<Question>, how: (key: string) => string): never {
  const q = card.questions.find((x) => !answered.has(x))!;
  return fail(`Question ${named(q)} has no answer; ${how(keyOf(card, q))} (questions: ${questionList(card)}).`);
}

/**
 * Reads a whole plain-text reply to a card; throws invalid_answer (ambiguous_reply for a
 * slip, see the top of this file) with one sentence when it cannot. Marked `asText`, a
 * one-question card's whole reply is its text; several questions still read keys and lines.
 */
export function parseReply(card: Card, text: string, options: ReplyOptions = {}): Answer {
  checkLength(text);
  if (card.answerRules === 'openclaw' && !options.asText) return parseOpenclawReply(card, text);
  const lines = text.split(/\r?\n/);
  const filled = lines.filter((l) => l.trim());
  if (!filled.length) return fail('The reply is empty: give a number, a label or some text.');

  const keys = lines.map((l) => readKey(card, l));
  const firstFilled = lines.findIndex((l) => l.trim());
  const keyed = card.questions.length === 1 ? !options.asText && keys[firstFilled] !== undefined : keys.some(Boolean);
  const entry = (q: Question, value: string) => parseEntry(card, q, value, options);
  const lineKey = `key each line ("${keyOf(card, card.questions[0])}: …")`;

  if (!keyed) {
    if (card.questions.length === 1) {
      const q = card.questions[0];
      return { [q.id]: entry(q, text) };
    }
    if (filled.length < card.questions.length) {
      missing(card, new Set(card.questions.slice(0, filled.length)), () => `the reply has ${filled.length} line${filled.length === 1 ? '' : 's'} for ${card.questions.length} questions: give one line per question, or ${lineKey}`);
    }
    if (filled.length > card.questions.length) {
      fail(`The reply has ${filled.length} lines for ${card.questions.length} questions: give one line per question, or ${lineKey}.`);
    }
    return Object.fromEntries(card.questions.map((q, i) => [q.id, entry(q, filled[i])]));
  }

  // Keyed lines; a line without a key continues the value above it.
  const values = new Map<Question, string[]>();
  let current: Question | undefined;
  lines.forEach((line, i) => {
    const key = keys[i];
    if (key) {
      current = key.question;
      const list = values.get(current);
      if (list) list.push(key.value);
      else values.set(current, [key.value]);
    } else if (line.trim()) {
      if (!current) fail(`The line "${line.trim()}" names no question; start it with a question's header, number or id and ":" (questions: ${questionList(card)}).`);
      values.get(current!)!.push(line);
    }
  });
  const answered = new Set([...values].filter(([, v]) => v.join('\n').trim()).map(([q]) => q));
  if (answered.size < card.questions.length) missing(card, answered, (key) => `add a line for it ("${key}: …")`);
  return Object.fromEntries(card.questions.map((q) => [q.id, entry(q, values.get(q)!.join('\n'))]));
}
