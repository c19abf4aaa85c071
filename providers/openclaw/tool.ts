import { z } from 'zod';
import { askTool, atMost, filledText, toolText as text, type ToolDefinition } from '../../src/cards/ask-dialect.js';
import { LIMITS } from '../../src/cards/model.js';

// OpenClaw's ask_user, served over MCP at /mcp/openclaw, so an agent written for OpenClaw's
// own tool works unchanged (docs/providers/openclaw.md). The limits are OpenClaw's.

export const ASK_USER = 'ask_user';

export const MAX_QUESTIONS = 3;
export const MIN_OPTIONS = 2;
export const MAX_OPTIONS = 4;
/** A longer header is cut to this many characters, not refused. */
export const MAX_HEADER = 12;
export const MAX_LABEL = 64;
export const ID_PATTERN = /^[a-z][a-z0-9_]*$/;
export const DEFAULT_TIMEOUT_SECONDS = 900;
export const MIN_TIMEOUT_SECONDS = 30;
export const MAX_TIMEOUT_SECONDS = 3600;

export const NO_ANSWER_TEXT = 'No answer arrived; proceed with best judgment.';

export const ASK_USER_DESCRIPTION = [
  'Ask the user one to three structured questions and wait for the answers.',
  'Ask only about decisions that truly belong to the user; one question per call unless the answers must be given together.',
  'Put every choice in options (2-4), the recommended one first with "(Recommended)" at the end of its label;',
  'never add an "Other" option: free text is always allowed. Use multiSelect only when several options may be picked at once.',
  'Never ask for a credential (API key, token, password). On status "no_answer" proceed with your best judgment.',
].join(' ');

// The model's arguments, and the schema it is shown (tools/list, as OpenClaw documents it)
// derived from them. Every message is relative to the field it is about: the adapter puts
// the field's path in front. Unknown fields are dropped. The relay's own card limits are
// refinements, checked but not part of OpenClaw's schema.

const OptionSchema = z.object(
  {
    label: text(true).trim().refine((s) => s.length > 0, { error: 'is empty.' }).max(MAX_LABEL, { error: `is longer than ${MAX_LABEL} characters.` }),
    description: text()
      .trim()
      .refine(atMost(LIMITS.descriptionChars), { error: `is longer than ${LIMITS.descriptionChars} characters.` })
      .optional(),
  },
  { error: 'must be an object {label, description?}.' },
);

const count = (input: unknown, noun: string) => {
  const n = (input as unknown[]).length;
  return `${n} ${n === 1 ? noun : `${noun === 'entry' ? 'entries' : `${noun}s`}`}`;
};

const QuestionSchema = z
  .object(
    {
      id: text(true)
        .regex(ID_PATTERN, {
          error: (i) => `"${String(i.input)}" must be snake_case: a lowercase letter, then lowercase letters, digits or "_".`,
        })
        .describe('Unique snake_case answer key.'),
      header: text()
        .transform((h) => h.trim().slice(0, MAX_HEADER).trimEnd())
        .describe('Short label; cut to 12 characters.')
        .optional(),
      question: filledText(LIMITS.textChars)
        .describe('One sentence.'),
      options: z
        .array(OptionSchema, {
          error: (i) => (i.input === undefined ? `is required: give ${MIN_OPTIONS}-${MAX_OPTIONS} options.` : 'must be a list of {label, description?} objects.'),
        })
        .min(MIN_OPTIONS, { error: (i) => `has ${count(i.input, 'entry')}; give ${MIN_OPTIONS}-${MAX_OPTIONS}.` })
        .max(MAX_OPTIONS, { error: (i) => `has ${count(i.input, 'entry')}; give ${MIN_OPTIONS}-${MAX_OPTIONS}.` })
        .describe('The choices, 2-4; labels unique. Never add "Other".'),
      multiSelect: z.boolean({ error: 'must be true or false.' }).default(false),
    },
    { error: 'must be an object {id, header, question, options, multiSelect?}.' },
  )
  // OpenClaw's schema asks for a header; the relay also takes a question without one.
  .meta({ required: ['id', 'header', 'question', 'options'] });

export const AskUserInputSchema = z.object(
  {
    questions: z
      .array(QuestionSchema, { error: (i) => (i.input === undefined ? 'is required: a list of 1-3 questions.' : 'must be a list of 1-3 questions.') })
      .min(1, { error: 'is empty; ask 1-3 questions.' })
      .max(MAX_QUESTIONS, { error: (i) => `has ${count(i.input, 'entry')}; ask at most ${MAX_QUESTIONS} at once.` })
      .describe('The questions to ask, 1-3.'),
    timeoutSeconds: z
      .number({ error: 'must be a number of seconds.' })
      .finite({ error: 'must be a number of seconds.' })
      // OpenClaw documents whole seconds; the relay rounds a fraction instead of refusing it (clampTimeout).
      .meta({ type: 'integer', default: DEFAULT_TIMEOUT_SECONDS })
      .describe('How long to wait for the user; default 900, clamped to 30-3600.')
      .optional(),
  },
  { error: 'must be an object {questions: [...], timeoutSeconds?}.' },
);
export type AskUserInput = z.infer<typeof AskUserInputSchema>;

/** structuredContent of the result (the adapter's StructuredResult is the same, by status). */
export const AskUserOutputSchema = z.object({
  status: z.enum(['answered', 'no_answer']),
  answers: z.object({ answers: z.record(z.string(), z.array(z.string())) }).optional(),
});

/** OpenClaw's ask_user as tools/list shows it. */
export const ASK_USER_TOOL: ToolDefinition = askTool(ASK_USER, ASK_USER_DESCRIPTION, AskUserInputSchema, AskUserOutputSchema);

/** timeoutSeconds as the card's wait: default 900, rounded, clamped to 30-3600. */
export function clampTimeout(seconds: number | undefined): number {
  if (seconds === undefined) return DEFAULT_TIMEOUT_SECONDS;
  return Math.min(MAX_TIMEOUT_SECONDS, Math.max(MIN_TIMEOUT_SECONDS, Math.round(seconds)));
}
