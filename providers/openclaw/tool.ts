import { z } from 'zod';
import { askTool, atMost, toolText as text, type ToolDefinition } from '../../src/cards/ask-dialect.js';
import { LIMITS } from '../../src/cards/model.js';

// OpenClaw's ask_user, served over MCP at /mcp/openclaw, so an agent written for OpenClaw's
// own tool works unchanged (docs/providers/openclaw.md). The schema, its descriptions and
// its limits are OpenClaw's (src/agents/tools/ask-user-tool-normalization.ts and the gateway
// protocol's QuestionOptionSchema): every object closed, a header required, whole seconds.
// What OpenClaw checks after its schema (trimmed text, the 64-character label, unique ids and
// labels) is the adapter's, with OpenClaw's messages.

export const ASK_USER = 'ask_user';

export const MAX_QUESTIONS = 3;
export const MIN_OPTIONS = 2;
export const MAX_OPTIONS = 4;
/** A longer header is cut to this many UTF-16 units, not refused. */
export const MAX_HEADER = 12;
export const MAX_LABEL = 64;
export const ID_PATTERN = /^[a-z][a-z0-9_]*$/;
export const DEFAULT_TIMEOUT_SECONDS = 900;
export const MIN_TIMEOUT_SECONDS = 30;
export const MAX_TIMEOUT_SECONDS = 3600;

/** OpenClaw's own texts: the result notes and the refusals, in the order OpenClaw checks. */
export const TEXTS = {
  noAnswer: 'No answer arrived; proceed with best judgment.',
  cancelled: 'The question was cancelled; proceed with best judgment.',
  contract: 'ask_user arguments do not match the model-facing question contract',
  format: 'ask_user questions do not match the required question format',
  display: 'ask_user questions exceed the model-facing display contract',
  duplicateId: (id: string) => `duplicate question id '${id}'`,
  duplicateValues: (id: string) => `question '${id}' has duplicate option values`,
  duplicateLabel: (id: string, label: string) => `question '${id}' has duplicate option label '${label}'`,
  blankThread: 'threadId must be a non-empty string',
  threadShape: 'threadId supports only one single-select question; ask multi-question or multi-select prompts without threadId',
  pending: 'ask_user already has a pending question for this session; wait for it to resolve before asking another',
} as const;

/** OpenClaw's describeAskUserTool(), word for word. */
export const ASK_USER_DESCRIPTION = [
  'Ask the human user 1-3 structured questions and wait for their answer; `multiSelect` allows picking several options and `timeoutSeconds` bounds the wait.',
  'Use only when blocked on a decision genuinely theirs that cannot be resolved from the request, code, or sensible defaults; never ask whether to proceed or confirm a plan.',
  'Ask exactly one question per call unless several answers must be submitted together; one single-select question uses native controls on supported messaging channels.',
  'Put every selectable choice in `options`, never only in the question text. Put the recommended option first and suffix its label with ` (Recommended)`.',
  'Use `multiSelect` only when the user may choose several options at once; otherwise omit it.',
  'Do not include an Other option; free text is added automatically.',
  'If the result is no_answer, continue with best judgment.',
].join(' ');

// The model's arguments, and the schema it is shown, derived from them. Messages are relative
// to the field (the adapter puts the path, and OpenClaw's sentence, in front).

/** A closed object: a field OpenClaw's schema does not have is refused, naming it. */
const closed = <T extends z.ZodRawShape>(shape: T, expected: string) =>
  z.strictObject(shape, {
    error: (i) => (i.code === 'unrecognized_keys' ? `has a field ask_user does not take: ${i.keys.map((k) => `"${k}"`).join(', ')}.` : `must be an object ${expected}.`),
  });

const filled = (max?: number) => {
  const base = text(true).min(1, { error: 'is empty.' });
  return max === undefined ? base : base.max(max, { error: `is longer than ${max} characters.` });
};

const PreviewSchema = z.union(
  [
    closed({ type: z.literal('mcp_app_tool'), name: filled(), arguments: z.record(z.string(), z.unknown()).optional() }, '{type: "mcp_app_tool", name, arguments?}'),
    closed(
      { type: z.literal('resource_link'), uri: filled(), name: filled(), title: text().optional(), description: text().optional(), mimeType: text().optional() },
      '{type: "resource_link", uri, name, title?, description?, mimeType?}',
    ),
  ],
  { error: 'must be {type: "mcp_app_tool", name, arguments?} or {type: "resource_link", uri, name, …}.' },
);

// OpenClaw's schema admits value, thumbnail, resourceUri and preview on an option; its
// ask_user then keeps only label and description, and so does askrelay.
const OptionSchema = closed(
  {
    label: filled(),
    description: text().refine(atMost(LIMITS.descriptionChars), { error: `is longer than ${LIMITS.descriptionChars} characters.` }).optional(),
    value: filled(4096).optional(),
    thumbnail: filled(65536).optional(),
    resourceUri: filled(2048).optional(),
    preview: PreviewSchema.optional(),
  },
  '{label, description?}',
);

const count = (input: unknown, noun: string) => {
  const n = (input as unknown[]).length;
  return `${n} ${n === 1 ? noun : `${noun === 'entry' ? 'entries' : `${noun}s`}`}`;
};

const QuestionSchema = closed(
  {
    id: text(true)
      .regex(ID_PATTERN, {
        error: (i) => `"${String(i.input)}" must be snake_case: a lowercase letter, then lowercase letters, digits or "_".`,
      })
      .describe('Unique snake_case answer key.'),
    header: filled().describe('Short chip label; longer input is truncated to 12 characters.'),
    question: filled()
      .refine(atMost(LIMITS.textChars), { error: `is longer than ${LIMITS.textChars} characters.` })
      .describe('Single-sentence question only. Put all selectable choices in options.'),
    options: z
      .array(OptionSchema, {
        error: (i) => (i.input === undefined ? `is required: give ${MIN_OPTIONS}-${MAX_OPTIONS} options.` : 'must be a list of {label, description?} objects.'),
      })
      .min(MIN_OPTIONS, { error: (i) => `has ${count(i.input, 'entry')}; give ${MIN_OPTIONS}-${MAX_OPTIONS}.` })
      .max(MAX_OPTIONS, { error: (i) => `has ${count(i.input, 'entry')}; give ${MIN_OPTIONS}-${MAX_OPTIONS}.` })
      .describe('Every selectable choice. Put the recommended choice first; do not repeat choices only in the question text.'),
    multiSelect: z.boolean({ error: 'must be true or false.' }).describe('True only when the user may choose several options at once.').optional(),
  },
  '{id, header, question, options, multiSelect?}',
);

export const AskUserInputSchema = closed(
  {
    questions: z
      .array(QuestionSchema, { error: (i) => (i.input === undefined ? 'is required: a list of 1-3 questions.' : 'must be a list of 1-3 questions.') })
      .min(1, { error: 'is empty; ask 1-3 questions.' })
      .max(MAX_QUESTIONS, { error: (i) => `has ${count(i.input, 'entry')}; ask at most ${MAX_QUESTIONS} at once.` }),
    timeoutSeconds: z
      .int({ error: 'must be a whole number of seconds.' })
      .describe('Maximum human wait in seconds; default 900, clamped 30-3600. Earlier run cancellation or overall run timeout still applies.')
      .optional(),
    threadId: text()
      .min(1, { error: 'is empty.' })
      .describe(
        "Thread to post the question in (Slack: the thread's root message ts). Default: the thread of the message that started this turn, or top level when that message was not in a thread. Set it when the conversation you are asking about is in a different thread. Typed replies in that thread are not seen, so the question is answered with its buttons only: one question, no multiSelect, no custom answer.",
      )
      .optional(),
  },
  '{questions: [...], timeoutSeconds?, threadId?}',
);
export type AskUserInput = z.infer<typeof AskUserInputSchema>;

/** structuredContent of the result: OpenClaw's details. */
export const AskUserOutputSchema = z.object({
  status: z.enum(['answered', 'no_answer']),
  answers: z.object({ answers: z.record(z.string(), z.array(z.string())) }).optional(),
});

/** OpenClaw's ask_user as tools/list shows it. */
export const ASK_USER_TOOL: ToolDefinition = askTool(ASK_USER, ASK_USER_DESCRIPTION, AskUserInputSchema, AskUserOutputSchema);

/** timeoutSeconds as the card's wait: default 900, clamped to 30-3600. */
export function clampTimeout(seconds: number | undefined): number {
  return Math.min(MAX_TIMEOUT_SECONDS, Math.max(MIN_TIMEOUT_SECONDS, seconds ?? DEFAULT_TIMEOUT_SECONDS));
}
