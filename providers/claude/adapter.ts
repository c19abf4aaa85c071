import { shownLabels, shownText } from '../../src/cards/draft.js';
import { LIMITS, type AnswerEntry, type Card, type CardDraft, type QuestionInput } from '../../src/cards/model.js';
import { clip } from '../../src/cards/text.js';
import { isRecord } from './text.js';
import { ASK_USER_QUESTION, AskUserQuestionInputSchema, type AskUserQuestionInput, type AskUserQuestionQuestion } from './tool.js';

// Claude's adapter: pure functions between Claude Code's AskUserQuestion and the relay's
// card (ExitPlanMode and other tools' approval cards are in approvals.ts). No I/O. The
// strings and shapes below are the ones Claude Code 2.1.332 uses (measured: docs/providers/claude.md
// and test/providers/golden/); golden tests pin them.

// ---- Tool input → card draft -----------------------------------------------------------

/** How a card header may be at most, in characters (Claude Code's chip is "max 12 chars"). */
export const HEADER_CHARS = 12;

interface ShownOption {
  /** The label as the card shows it (trimmed, unique ignoring case, within the card limits). */
  label: string;
  /** The label exactly as the model wrote it: what Claude Code matches answers against. */
  source: string;
  description?: string;
}

/**
 * The options of one question as the card shows them. The generic card rules
 * (normalizeQuestions) would refuse some input Claude Code accepts, so this shapes the
 * options to pass them (shownLabels): "Other"-like options are dropped (free text is always
 * offered), labels that differ only in case or surrounding space get a " (2)" suffix,
 * over-long labels and descriptions are shortened, a label that shows nothing is named by
 * its place. `source` keeps the way back to the model's label.
 */
function shownOptions(q: AskUserQuestionQuestion): ShownOption[] {
  const labels = shownLabels(q.options.map((o) => o.label));
  const shown: ShownOption[] = [];
  q.options.forEach((option, i) => {
    const label = labels[i];
    if (label === undefined) return;
    const description = option.description?.trim();
    shown.push({
      label,
      source: option.label,
      ...(description ? { description: clip(description, LIMITS.descriptionChars) } : {}),
    });
  });
  return shown;
}

const questionId = (index: number) => `q${index + 1}`;

/** What the card shows for a question whose text shows nothing (Claude Code's schema allows one). */
export const NO_QUESTION_TEXT = '(the question has no visible text)';

function shownQuestion(q: AskUserQuestionQuestion, index: number): QuestionInput {
  const options = shownOptions(q);
  const header = q.header?.trim();
  return {
    id: questionId(index),
    ...(header ? { header: clip(header, HEADER_CHARS) } : {}),
    text: shownText(q.question, LIMITS.textChars, NO_QUESTION_TEXT),
    options: options.map(({ label, description }) => (description ? { label, description } : { label })),
    // Dropping "Other" may leave a single option, and the card cannot multi-select one.
    multiSelect: q.multiSelect === true && options.length >= 2,
    freeText: true,
  };
}

export type CardDraftResult = { ok: true; input: AskUserQuestionInput; draft: CardDraft } | { ok: false; error: string };

/**
 * Validates an AskUserQuestion input (leniently: unknown fields stay, a long header is
 * shortened) and turns it into a card draft. The runner adds sessionId, provider, engine
 * and toolCallId. `error` is one sentence naming the field, written for the model.
 */
export function toCardDraft(input: unknown): CardDraftResult {
  const parsed = AskUserQuestionInputSchema.safeParse(input);
  if (!parsed.success) {
    return { ok: false, error: parsed.error.issues[0]?.message ?? 'The tool input is not valid.' };
  }
  return {
    ok: true,
    input: parsed.data,
    draft: {
      layout: 'steps',
      tool: ASK_USER_QUESTION,
      origin: 'native',
      kind: 'question',
      questions: parsed.data.questions.map(shownQuestion),
    },
  };
}

// ---- Card → Claude Code's updatedInput -------------------------------------------------

// Fields through which the host speaks for the user. A model may put some of them in its
// own tool input (`answers` and `annotations` are in the schema); they are never passed
// on, so the model cannot answer its own question.
const USER_FIELDS = ['answers', 'annotations', 'response', 'followUp', 'afkTimeoutMs'];

function withoutUserFields(input: AskUserQuestionInput): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...input };
  for (const key of USER_FIELDS) delete copy[key];
  return copy;
}

/** Claude Code's own join (its `yNn`): every label with ", " or `"` written as JSON. */
function quotedJoin(labels: readonly string[]): string {
  return labels.map((l) => (l.includes(', ') || l.includes('"') ? JSON.stringify(l) : l)).join(', ');
}

/** The answer string for picked labels: one label raw, several joined the way Claude Code parses them. */
function labelsValue(labels: readonly string[]): string {
  return labels.length === 1 ? labels[0] : quotedJoin(labels);
}

interface Reply {
  question: string;
  labels: string[];
  text?: string;
}

/** The card's answer, one entry per answered question, in the model's own spelling. */
function repliesOf(input: AskUserQuestionInput, card: Card): Reply[] {
  if (card.status !== 'answered' || !card.answer) return [];
  const replies: Reply[] = [];
  input.questions.forEach((q, i) => {
    const entry: AnswerEntry | undefined = card.answer?.[questionId(i)];
    if (!entry) return;
    const options = shownOptions(q);
    const picked = new Set(entry.selected);
    // Option order, the model's spelling; a label the card did not offer stays as given.
    const labels = [
      ...options.filter((o) => picked.has(o.label)).map((o) => o.source),
      ...entry.selected.filter((label) => !options.some((o) => o.label === label)),
    ];
    const text = entry.text?.trim() ? entry.text : undefined;
    if (labels.length === 0 && text === undefined) return;
    replies.push({ question: q.question, labels, ...(text !== undefined ? { text } : {}) });
  });
  return replies;
}

/**
 * The `updatedInput` for the code engine's `canUseTool` allow result. Answered:
 * `answers: {[question]: value}` (always strings). The same free text for every question of
 * a card with 2+ questions: `response` instead (a whole free reply). Skipped, expired or
 * cancelled: no answers, so Claude Code writes "The user did not answer the questions."
 */
export function toUpdatedInput(input: AskUserQuestionInput, card: Card): Record<string, unknown> {
  const base = withoutUserFields(input);
  const replies = repliesOf(input, card);
  if (replies.length === 0) return base;

  const first = replies[0].text;
  const wholeReply =
    input.questions.length >= 2 &&
    replies.length === input.questions.length &&
    first !== undefined &&
    replies.every((r) => r.labels.length === 0 && r.text === first);
  if (wholeReply) return { ...base, response: first };

  // Keyed by question text, which the model writes: fromEntries keeps a question named
  // "__proto__" an own key instead of setting the object's prototype.
  const answers: Record<string, string> = Object.fromEntries(
    replies.map((r) => [r.question, [...(r.labels.length ? [labelsValue(r.labels)] : []), ...(r.text !== undefined ? [r.text] : [])].join(', ')]),
  );
  return { ...base, answers };
}

// ---- Card → tool_result text (messages engine) -----------------------------------------

/** Claude Code's parser for a multi-select answer (its `V`): labels, or null when it is not a join. */
function splitLabels(value: string): string[] | null {
  const labels: string[] = [];
  let rest = value;
  for (;;) {
    if (rest.startsWith('"')) {
      let close = -1;
      let escaped = false;
      for (let i = 1; i < rest.length; i++) {
        const ch = rest[i];
        if (escaped) {
          escaped = false;
          continue;
        }
        if (ch === '\\') {
          escaped = true;
          continue;
        }
        if (ch === '"') {
          close = i;
          break;
        }
      }
      if (close === -1) return null;
      try {
        const label: unknown = JSON.parse(rest.slice(0, close + 1));
        if (typeof label !== 'string') return null;
        labels.push(label);
      } catch {
        return null;
      }
      rest = rest.slice(close + 1);
    } else {
      const comma = rest.indexOf(', ');
      const label = comma === -1 ? rest : rest.slice(0, comma);
      if (label.includes('"')) return null;
      labels.push(label);
      rest = comma === -1 ? '' : rest.slice(comma);
    }
    if (rest === '') break;
    if (!rest.startsWith(', ')) return null;
    rest = rest.slice(2);
    if (rest === '') return null;
  }
  return labels;
}

// Claude Code's marker for "only notes, no answer"; such a value counts as unanswered.
const NOTES_ONLY = '(notes only)';

const LABELS_ONLY_TAIL = '. You can now continue with these answers in mind.';
const FREE_TEXT_TAIL =
  '. Read the answers carefully \u2014 they may request clarification, changes, or that you not proceed \u2014 and follow what they actually say.';
export const NOT_ANSWERED = 'The user did not answer the questions.';

/**
 * The tool_result Claude Code writes for an AskUserQuestion call answered with
 * `updatedInput` (its mapToolResultToToolResultBlockParam for classic questions; the relay
 * never sends `annotations`, so notes and previews are not rendered).
 */
export function claudeCodeToolResult(questions: readonly AskUserQuestionQuestion[], updatedInput: Record<string, unknown>): string {
  const answers = isRecord(updatedInput.answers) ? updatedInput.answers : {};
  const valueOf = (question: string) => {
    const value = Object.hasOwn(answers, question) ? answers[question] : undefined;
    return typeof value === 'string' ? value : undefined;
  };
  const answered = (value: string | undefined): value is string => !!value && value !== NOTES_ONLY;

  const response = updatedInput.response;
  if (typeof response === 'string' && response.trim()) return `The user responded: ${response}`;

  const pairs = questions
    .map((q) => {
      const value = valueOf(q.question);
      return answered(value) ? `"${q.question}"="${value}"` : null;
    })
    .filter((pair) => pair !== null)
    .join(', ');
  if (!pairs) return NOT_ANSWERED;

  const labelsOnly = questions.every((q) => {
    const value = valueOf(q.question);
    if (!answered(value)) return true;
    const labels = new Set(q.options.map((o) => o.label));
    if (labels.has(value)) return true;
    if (q.multiSelect !== true) return false;
    const parts = splitLabels(value);
    return parts !== null && parts.length >= 1 && quotedJoin(parts) === value && parts.every((p) => labels.has(p));
  });
  return labelsOnly
    ? `Your questions have been answered: ${pairs}${LABELS_ONLY_TAIL}`
    : `The user answered: ${pairs}${FREE_TEXT_TAIL}`;
}

/**
 * The tool_result text for the messages engine: byte for byte what Claude Code writes for
 * the `updatedInput` that toUpdatedInput gives the code engine for the same card.
 */
export function toToolResult(input: AskUserQuestionInput, card: Card): string {
  return claudeCodeToolResult(input.questions, toUpdatedInput(input, card));
}

/** The is_error tool_result for invalid input, in Claude Code's wrapper. */
export function toolInputError(message: string): string {
  return `<tool_use_error>InputValidationError: ${message}</tool_use_error>`;
}
