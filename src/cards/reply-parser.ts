import { RelayError } from '../errors.js';
import { LIMITS, type Answer, type AnswerEntry, type Card, type Question } from './model.js';

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

/** A reply over the answer limit is refused before any of it is read. */
function checkLength(text: string): void {
  if (text.length > LIMITS.answerTextChars) {
    fail(`The reply is ${text.length} characters long; at most ${LIMITS.answerTextChars} are read. Shorten it.`);
  }
}

function optionList(q: Question): string {
  return q.options.map((o, i) => `${i + 1}) ${o.label}`).join(', ');
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
  return q.options.length
    ? fail(`"${text}" is not an option of question "${q.id}"; answer with a number or a label: ${optionList(q)}.`)
    : fail(`Question "${q.id}" takes no free text and has no options to pick.`);
}

/** The answer to one question from the text typed for it (no keys are read here). */
export function parseEntry(card: Card, q: Question, text: string): AnswerEntry {
  checkLength(text);
  const t = text.trim();
  if (!t) return fail(`The answer to question "${q.id}" is empty: give a number, a label or some text.`);
  const trie = labelTrie(q);
  const whole = matchOption(q, trie, t);
  if (whole) return { selected: [whole] };

  const { picked, rest } = readList(q, trie, t);
  const selected = inOptionOrder(q, picked);
  if (q.multiSelect) {
    if (!selected.length) return freeText(q, t);
    if (!rest.length) return { selected };
    return { ...freeText(q, rest.join(', ')), selected };
  }
  // A single-choice question: only a text that lists nothing but options is a list.
  if (selected.length > 1 && !rest.length) {
    if (card.selectSeveral) return { selected };
    return fail(`Question "${q.id}" takes one choice; ${selected.length} were picked.`);
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
  const k = key.toLowerCase();
  const question =
    card.questions.find((q) => q.id === key) ??
    card.questions.find((q) => q.id.toLowerCase() === k || q.header?.trim().toLowerCase() === k) ??
    (/^\d+$/.test(k) ? card.questions[Number(k) - 1] : undefined);
  return question ? { question, value } : undefined;
}

function missing(card: Card, answered: Set<Question>, how: string): never {
  const q = card.questions.find((x) => !answered.has(x))!;
  const names = card.questions.map((x) => x.id).join(', ');
  return fail(`Question "${q.id}" (${q.text}) has no answer; ${how} (questions: ${names}).`);
}

/** Reads a whole plain-text reply to a card; throws invalid_answer with one sentence when it cannot. */
export function parseReply(card: Card, text: string): Answer {
  checkLength(text);
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
      missing(card, new Set(card.questions.slice(0, filled.length)), `the reply has ${filled.length} line${filled.length === 1 ? '' : 's'} for ${card.questions.length} questions: give one line per question, or key each line ("${card.questions[0].id}: …")`);
    }
    if (filled.length > card.questions.length) {
      fail(`The reply has ${filled.length} lines for ${card.questions.length} questions: give one line per question, or key each line ("${card.questions[0].id}: …").`);
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
      const list = values.get(current);
      if (list) list.push(key.value);
      else values.set(current, [key.value]);
    } else if (line.trim()) {
      if (!current) fail(`The line "${line.trim()}" names no question; start it with a question's id, header or number and ":" (questions: ${card.questions.map((q) => q.id).join(', ')}).`);
      values.get(current!)!.push(line);
    }
  });
  const answered = new Set([...values].filter(([, v]) => v.join('\n').trim()).map(([q]) => q));
  if (answered.size < card.questions.length) missing(card, answered, 'add a line for it ("<id>: …")');
  return Object.fromEntries(card.questions.map((q) => [q.id, parseEntry(card, q, values.get(q)!.join('\n'))]));
}
