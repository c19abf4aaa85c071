import { shownLabels, shownText } from '../../src/cards/draft.js';
import { LIMITS, type Card, type CardDraft, type QuestionInput, type RelayMode } from '../../src/cards/model.js';
import { ASK_USER, AskUserInputSchema, MAX_CHOICES, type AskUserInput } from './tool.js';

// Pure translations between Copilot's ask_user calls and cards, for both engines:
// - sdk engine: askrelay's own ask_user (question, choices, multi_select) → a result string;
// - extension engine: Copilot's built-in ask_user, classic ({question, choices}) → {answer,
//   wasFreeform}, or the form variant ({message, requestedSchema}) → {action, content}.

export type CardDraftResult = { ok: true; input: AskUserInput; draft: CardDraft } | { ok: false; error: string };

const SELECT_ALL = /select all that apply/i;

const modeSentence = (mode: RelayMode) =>
  mode === 'autopilot'
    ? 'Proceed with your best judgement and say what you assumed.'
    : "Stop here and wait for the user's next message; do not guess.";

/** What the agent reads when a card closed without an answer; one sentence per cause. */
export function noAnswerText(card: Card): string {
  if (card.status === 'skipped') return `The user declined to answer. ${modeSentence(card.relayMode)}`;
  if (card.status === 'cancelled') return 'The question was cancelled: the session is stopping.';
  return `Nobody answered within the wait. ${modeSentence(card.relayMode)}`;
}

export function toCardDraft(raw: unknown): CardDraftResult {
  const parsed = AskUserInputSchema.safeParse(raw);
  if (!parsed.success) return { ok: false, error: parsed.error.issues[0].message };
  const input = parsed.data;
  const seen = new Set<string>();
  const choices = (input.choices ?? [])
    .map((c) => c.trim())
    .filter((c) => c && !seen.has(c.toLowerCase()) && seen.add(c.toLowerCase()))
    .slice(0, MAX_CHOICES);
  if (input.multi_select && choices.length < 2) {
    return { ok: false, error: `multi_select needs at least 2 choices; ${choices.length === 0 ? 'none were' : 'only 1 was'} given.` };
  }
  const multiSelect = choices.length >= 2 && (input.multi_select === true || SELECT_ALL.test(input.question));
  return {
    ok: true,
    input,
    draft: {
      tool: ASK_USER,
      origin: 'relay',
      kind: 'question',
      layout: 'steps',
      // Every card with two or more options lets the user give several answers.
      selectSeveral: choices.length >= 2,
      questions: [{ id: 'q1', text: input.question.trim(), options: choices, multiSelect }],
    },
  };
}

/** The sdk engine's tool result: Copilot's own "User selected" / "User responded" forms. */
export function toToolResult(card: Card): string {
  const entry = card.status === 'answered' ? card.answer?.q1 : undefined;
  if (!entry) return noAnswerText(card);
  const lines: string[] = [];
  if (entry.selected.length) lines.push(`User selected: ${entry.selected.join(', ')}`);
  if (entry.text !== undefined) lines.push(`User responded: ${entry.text}`);
  return lines.join('\n');
}

export const inputErrorText = (message: string) => `Invalid ask_user call: ${message} Fix the arguments and call ask_user again.`;

// Extension engine, classic: onUserInputRequest({question, choices, allowFreeform}).

export interface UserInputRequest {
  question: string;
  choices?: string[];
  allowFreeform?: boolean;
}
export interface UserInputResponse {
  answer: string;
  wasFreeform: boolean;
}

/**
 * The choices of a built-in ask_user request as the card shows them, each with the choice
 * it stands for. The runtime owns this schema, so the choices are shaped rather than refused
 * (shownLabels): empty and repeated ones left out, long ones cut, at most LIMITS.options.
 */
function classicChoices(request: UserInputRequest): { label: string; choice: string }[] {
  const seen = new Set<string>();
  const choices = (request.choices ?? []).map((c) => String(c).trim()).filter((c) => c && !seen.has(c) && seen.add(c));
  const labels = shownLabels(choices);
  return choices
    .map((choice, i) => ({ label: labels[i], choice }))
    .filter((c): c is { label: string; choice: string } => c.label !== undefined)
    .slice(0, LIMITS.options);
}

export function classicCardDraft(request: UserInputRequest): CardDraft {
  const choices = classicChoices(request);
  const freeText = request.allowFreeform !== false || choices.length === 0;
  return {
    tool: ASK_USER,
    origin: 'native',
    kind: 'question',
    layout: 'steps',
    questions: [
      { id: 'q1', text: shownText(String(request.question ?? ''), LIMITS.textChars, '(no question text)'), options: choices.map((c) => c.label), multiSelect: false, freeText },
    ],
  };
}

/**
 * Never throws: the runtime would tell the model the user "was unable to respond due to an
 * error". With the request, a picked label becomes the choice it stands for (a long choice
 * is shown cut).
 */
export function classicResponse(card: Card, request?: UserInputRequest): UserInputResponse {
  const entry = card.status === 'answered' ? card.answer?.q1 : undefined;
  if (!entry) return { answer: noAnswerText(card), wasFreeform: true };
  const choices = request ? classicChoices(request) : [];
  const selected = entry.selected.map((label) => choices.find((c) => c.label === label)?.choice ?? label);
  if (selected.length && entry.text === undefined) return { answer: selected[0], wasFreeform: false };
  return { answer: [...selected, entry.text].filter(Boolean).join(', '), wasFreeform: true };
}
