import type { Card, CardDraft } from '../../src/cards/model.js';
import { findCredential } from '../../src/cards/secrets.js';
import { isBlank } from '../../src/cards/text.js';
import { ASK_USER, AskUserInputSchema, clampTimeout, MAX_HEADER, MAX_LABEL, TEXTS, type AskUserInput } from './tool.js';
import { firstIssueText } from '../../src/cards/issue-text.js';

// Pure translations between OpenClaw's ask_user and cards: tool arguments → card draft (or
// one sentence naming the bad field), and closed card → the tool result. No I/O here.

export const PROVIDER = 'openclaw';

export type CardDraftResult = { ok: true; input: AskUserInput; draft: CardDraft } | { ok: false; error: string };

export type StructuredResult = { status: 'answered'; answers: { answers: Record<string, string[]> } } | { status: 'no_answer' };

export interface ToolResult {
  content: { type: 'text'; text: string }[];
  structuredContent: StructuredResult & Record<string, unknown>;
}

export interface ToolError {
  content: { type: 'text'; text: string }[];
  isError: true;
}

/**
 * A question asking for a credential: a credential noun after a determiner ("your GitHub
 * token", "the API key", "an npm password"), unless it is plainly about the policy around
 * it ("the token limit"), or a question that already holds one (findCredential).
 */
const CREDENTIAL_NOUN = String.raw`(?:api[ _-]?keys?|access[ _-]?keys?|secret[ _-]?keys?|private[ _-]?keys?|client[ _-]?secrets?|tokens?|passwords?|passphrases?|passcodes?)`;
const NOT_A_REQUEST = String.raw`(?:limits?|counts?|budgets?|usage|sizes?|lengths?|polic(?:y|ies)|hashing|strength|rules?|formats?|rotation|expiry|lifetimes?|storage|manager)`;
const ASKS_FOR_CREDENTIAL = new RegExp(
  String.raw`\b(?:your|the|an?|my|our|their)\s+(?:[\w.-]+\s+){0,2}?${CREDENTIAL_NOUN}\b(?!\s+${NOT_A_REQUEST}\b)`,
  'i',
);

export function asksForCredential(text: string): boolean {
  return ASKS_FOR_CREDENTIAL.test(text) || findCredential(text) !== undefined;
}

/** The first `max` UTF-16 units, one fewer when the cut would split a surrogate pair (OpenClaw's truncateUtf16Safe). */
function truncateUtf16Safe(text: string, max: number): string {
  if (text.length <= max) return text;
  const high = text.charCodeAt(max - 1);
  return text.slice(0, high >= 0xd800 && high <= 0xdbff ? max - 1 : max);
}

const fail = (error: string): CardDraftResult => ({ ok: false, error });

/**
 * OpenClaw's normalizeAskUserParams, check for check and in its order, each refusal in its
 * words (the schema's with the field named after them); then askrelay's own: a card must
 * show something, and no question may ask for a credential.
 */
export function toCardDraft(raw: unknown): CardDraftResult {
  const parsed = AskUserInputSchema.safeParse(raw);
  // ("The arguments" is plural: the one message that names no field reads "have".)
  if (!parsed.success) return fail(`${TEXTS.contract}: ${firstIssueText(parsed.error).replace(/^The arguments has /, 'The arguments have ')}`);
  const input = parsed.data;
  const threadId = input.threadId?.trim();
  if (input.threadId !== undefined && !threadId) return fail(TEXTS.blankThread);
  if (threadId && (input.questions.length > 1 || input.questions[0].multiSelect === true)) return fail(TEXTS.threadShape);
  // A question asked into another thread is answered with its buttons only (OpenClaw's isOther: false).
  const freeText = !threadId;
  const questions = input.questions.map((q) => ({
    id: q.id.trim(),
    header: truncateUtf16Safe(q.header.trim(), MAX_HEADER),
    question: q.question.trim(),
    options: q.options.map((o) => ({ label: o.label.trim(), description: o.description?.trim() || undefined })),
    multiSelect: q.multiSelect === true,
  }));
  for (const [qi, q] of questions.entries()) {
    const where = `questions[${qi}]`;
    if (isBlank(q.question)) return fail(`${TEXTS.format}: ${where}.question shows nothing.`);
    const blank = q.options.findIndex((o) => isBlank(o.label));
    if (blank >= 0) return fail(`${TEXTS.format}: ${where}.options[${blank}].label shows nothing.`);
  }
  for (const [qi, q] of questions.entries()) {
    const where = `questions[${qi}]`;
    if (!q.header) return fail(`${TEXTS.display}: ${where}.header is blank.`);
    const long = q.options.findIndex((o) => o.label.length > MAX_LABEL);
    if (long >= 0) return fail(`${TEXTS.display}: ${where}.options[${long}].label is longer than ${MAX_LABEL} characters.`);
  }
  const ids = new Set<string>();
  for (const q of questions) {
    if (ids.has(q.id)) return fail(TEXTS.duplicateId(q.id));
    ids.add(q.id);
    const values = new Set<string>();
    const labels = new Set<string>();
    for (const { label } of q.options) {
      if (values.has(label)) return fail(TEXTS.duplicateValues(q.id));
      values.add(label);
      if (labels.has(label.toLowerCase())) return fail(TEXTS.duplicateLabel(q.id, label));
      labels.add(label.toLowerCase());
    }
  }
  for (const [qi, q] of questions.entries()) {
    if (asksForCredential(`${q.header}\n${q.question}`)) {
      return fail(`questions[${qi}] asks for a credential, which must never travel through ask_user; have the user put it in a secrets store or the environment instead.`);
    }
  }
  return {
    ok: true,
    input,
    draft: {
      provider: PROVIDER,
      tool: ASK_USER,
      origin: 'relay',
      kind: 'question',
      layout: 'steps',
      selectSeveral: false,
      keepOtherOptions: true,
      answerRules: 'openclaw',
      waitSeconds: clampTimeout(input.timeoutSeconds),
      questions: questions.map((q) => ({
        id: q.id,
        header: q.header,
        text: q.question,
        options: q.options.map((o) => (o.description ? { label: o.label, description: o.description } : { label: o.label })),
        multiSelect: q.multiSelect,
        freeText,
      })),
    },
  };
}

/** One question's answer values: the picked labels in order, then the typed text (trimmed) if any. */
function valuesOf(card: Card, id: string): string[] {
  const entry = card.answer?.[id];
  if (!entry) return [];
  const typed = entry.text?.trim();
  return typed ? [...entry.selected, typed] : [...entry.selected];
}

/**
 * The result of a closed card, as OpenClaw's ask_user returns it: a note or one
 * `header: values` line per question, a blank line, then its details as pretty JSON.
 * Skipped counts as cancelled (the person declined the question).
 */
export function toToolResult(card: Card): ToolResult {
  if (card.status === 'pending') throw new Error(`Card ${card.id} is still pending.`);
  if (card.status !== 'answered') {
    const details: StructuredResult = { status: 'no_answer' };
    const note = card.status === 'expired' ? TEXTS.noAnswer : TEXTS.cancelled;
    return { content: [{ type: 'text', text: `${note}\n\n${JSON.stringify(details, null, 2)}` }], structuredContent: details };
  }
  const answers: Record<string, string[]> = {};
  const lines = card.questions.map((q) => {
    const values = valuesOf(card, q.id);
    answers[q.id] = values;
    return `${q.header ?? q.id}: ${values.length > 0 ? values.join(', ') : '(no answer)'}`;
  });
  const details: StructuredResult = { status: 'answered', answers: { answers } };
  return { content: [{ type: 'text', text: `${lines.join('\n')}\n\n${JSON.stringify(details, null, 2)}` }], structuredContent: details };
}

/** A call the relay could not take: the model reads one sentence naming the field. */
export function toToolError(message: string): ToolError {
  return { content: [{ type: 'text', text: message }], isError: true };
}

