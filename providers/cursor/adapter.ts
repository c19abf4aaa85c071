import { optionLabelProblem } from '../../src/cards/draft.js';
import type { Card, CardDraft, RelayMode } from '../../src/cards/model.js';
import type { z } from 'zod';
import { ASK_USER, AskUserInputSchema, MAX_OPTIONS, MIN_OPTIONS, type AskUserInput, type AskUserOutputSchema } from './tool.js';
import { firstIssueText } from '../../src/cards/issue-text.js';

// Pure translations between the Cursor dialect of ask_user and cards:
// tool arguments → card draft (or one sentence naming the bad field), and
// closed card → the tool result (text + structuredContent). No I/O here.

export const PROVIDER = 'cursor';

export type CardDraftResult = { ok: true; input: AskUserInput; draft: CardDraft } | { ok: false; error: string };

/** structuredContent of the result, as its schema in tool.ts says. */
export type StructuredResult = z.infer<typeof AskUserOutputSchema>;
export type AnswerLine = StructuredResult['answers'][number];

export interface ToolResult {
  content: { type: 'text'; text: string }[];
  structuredContent: StructuredResult & Record<string, unknown>;
  isError?: boolean;
}

export interface ToolError {
  content: { type: 'text'; text: string }[];
  isError: true;
}

export function toCardDraft(raw: unknown): CardDraftResult {
  const parsed = AskUserInputSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, error: firstIssueText(parsed.error) };
  const input = parsed.data;
  for (const [qi, q] of input.questions.entries()) {
    const where = `questions[${qi}]`;
    const options = q.options ?? [];
    if (options.length === 1) return { ok: false, error: `${where}.options has 1 entry; give ${MIN_OPTIONS}-${MAX_OPTIONS}, or leave options out for a free-text question.` };
    const problem = optionLabelProblem(where, options.map((o) => o.label), 'labels must be unique within a question');
    if (problem) return { ok: false, error: problem };
    if (q.multiSelect && options.length === 0) return { ok: false, error: `${where}.multiSelect needs options to pick from; give ${MIN_OPTIONS}-${MAX_OPTIONS}.` };
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
      questions: input.questions.map((q, i) => ({
        id: `q${i + 1}`,
        ...(q.header ? { header: q.header } : {}),
        text: q.question,
        options: (q.options ?? []).map((o) => (o.description ? { label: o.label, description: o.description } : { label: o.label })),
        multiSelect: q.multiSelect ?? false,
        freeText: true,
      })),
    },
  };
}

const modeSentence = (mode: RelayMode) =>
  mode === 'autopilot'
    ? 'Proceed with your best judgement and say what you assumed.'
    : "Stop here and wait for the user's next message; do not guess.";

/** The closing sentence when nobody answered; undefined for an answered card. */
export function noAnswerSentence(card: Card): string | undefined {
  if (card.status === 'skipped') return `The user declined to answer. ${modeSentence(card.relayMode)}`;
  if (card.status === 'expired') return `Nobody answered within the wait. ${modeSentence(card.relayMode)}`;
  if (card.status === 'cancelled') return 'The question was cancelled before anyone answered.';
  return undefined;
}

/** One answer as it reads on its line: labels, free text, or "(no answer)". */
function answerText(line: AnswerLine): string {
  const parts: string[] = [];
  if (line.selected.length) parts.push(line.selected.join(', '));
  if (line.text !== undefined && line.text.trim() !== '') parts.push(`(free text) ${line.text.replace(/\r?\n/g, '\n  ')}`);
  return parts.length ? parts.join('; ') : '(no answer)';
}

/** The result of a closed card: every question with its answer, as text and as structuredContent. */
export function toToolResult(card: Card): ToolResult {
  if (card.status === 'pending') throw new Error(`Card ${card.id} is still pending.`);
  const answered = card.status === 'answered';
  const answers: AnswerLine[] = card.questions.map((q) => {
    const entry = answered ? card.answer?.[q.id] : undefined;
    return {
      question: q.text,
      ...(q.header ? { header: q.header } : {}),
      selected: entry?.selected ?? [],
      ...(entry?.text !== undefined && entry.text.trim() !== '' ? { text: entry.text } : {}),
    };
  });
  const lines = answers.map((a) => `${a.question} → ${answerText(a)}`);
  const closing = noAnswerSentence(card);
  if (closing) lines.push(closing);
  return {
    content: [{ type: 'text', text: lines.join('\n') }],
    structuredContent: { status: card.status, cardId: card.id, answers },
  };
}

/** A call the relay could not take: the model reads one sentence naming the field. */
export function toToolError(message: string): ToolError {
  return { content: [{ type: 'text', text: message }], isError: true };
}
