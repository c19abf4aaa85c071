import { optionLabelProblem } from '../../src/cards/draft.js';
import type { Card, CardDraft } from '../../src/cards/model.js';
import { findCredential } from '../../src/cards/secrets.js';
import { ASK_USER, AskUserInputSchema, clampTimeout, NO_ANSWER_TEXT, type AskUserInput } from './tool.js';
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

export function toCardDraft(raw: unknown): CardDraftResult {
  const parsed = AskUserInputSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, error: firstIssueText(parsed.error) };
  const input = parsed.data;
  const ids = new Set<string>();
  for (const [qi, q] of input.questions.entries()) {
    const where = `questions[${qi}]`;
    if (ids.has(q.id)) return { ok: false, error: `${where}.id "${q.id}" is used twice; ids must be unique.` };
    ids.add(q.id);
    if (asksForCredential(`${q.header ?? ''}\n${q.question}`)) {
      return {
        ok: false,
        error: `${where} asks for a credential, which must never travel through ask_user; have the user put it in a secrets store or the environment instead.`,
      };
    }
    const problem = optionLabelProblem(where, q.options.map((o) => o.label), 'labels must be unique within a question (case is ignored)');
    if (problem) return { ok: false, error: problem };
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
      waitSeconds: clampTimeout(input.timeoutSeconds),
      questions: input.questions.map((q) => ({
        id: q.id,
        ...(q.header ? { header: q.header } : {}),
        text: q.question,
        options: q.options.map((o) => (o.description ? { label: o.label, description: o.description } : { label: o.label })),
        multiSelect: q.multiSelect ?? false,
        freeText: true,
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

/** The result of a closed card: `answered` with every question's values, or `no_answer`. */
export function toToolResult(card: Card): ToolResult {
  if (card.status === 'pending') throw new Error(`Card ${card.id} is still pending.`);
  if (card.status !== 'answered') {
    return { content: [{ type: 'text', text: NO_ANSWER_TEXT }], structuredContent: { status: 'no_answer' } };
  }
  const answers: Record<string, string[]> = {};
  const lines = card.questions.map((q) => {
    const values = valuesOf(card, q.id);
    answers[q.id] = values;
    const shown = values.length ? values.join(', ').replace(/\r?\n/g, '\n  ') : '(no answer)';
    return `${q.header ?? q.id}: ${shown}`;
  });
  return { content: [{ type: 'text', text: lines.join('\n') }], structuredContent: { status: 'answered', answers: { answers } } };
}

/** A call the relay could not take: the model reads one sentence naming the field. */
export function toToolError(message: string): ToolError {
  return { content: [{ type: 'text', text: message }], isError: true };
}

