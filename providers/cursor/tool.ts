import { z } from 'zod';
import { askTool, atMost, filledText, toolText as text, type ToolDefinition } from '../../src/cards/ask-dialect.js';
import { LIMITS } from '../../src/cards/model.js';

// askrelay's own ask_user in the Cursor dialect, served over MCP at /mcp. The schema is
// ours: MCP clients (Cursor, Claude Code, Copilot, Codex, …) show the model exactly this.

export const ASK_USER = 'ask_user';

export const MAX_QUESTIONS = 4;
export const MIN_OPTIONS = 2;
export const MAX_OPTIONS = 6;
/** A header is a short label shown above the question. */
export const MAX_HEADER = 40;

export const ASK_USER_DESCRIPTION = [
  'Ask the user one to four questions and wait for the answers (this may take hours; keep waiting).',
  'Use it whenever you need a decision or input from the user; never ask in plain text.',
  'For each question offer 2-6 options (put the one you recommend first and end its label with "(Recommended)");',
  'leave options out only when the answer must be free text. The user can always type their own answer,',
  'so never add an "Other" option. Set multiSelect when several options may be picked.',
  'The result lists every question with its answer.',
].join(' ');

// The model's arguments, and the schema it is shown (tools/list) derived from them. Every
// message is relative to the field it is about: the adapter puts the field's path in front
// ("questions[1].options has 7 entries; give 2-6."). Unknown fields are dropped. The relay's
// own card limits are refinements, checked but not part of Cursor's schema.

const OptionSchema = z.object(
  {
    label: filledText(LIMITS.labelChars)
      .describe('The text of the choice; unique within the question.'),
    description: text()
      .trim()
      .refine(atMost(LIMITS.descriptionChars), { error: `is longer than ${LIMITS.descriptionChars} characters.` })
      .describe('What picking this choice means.')
      .optional(),
  },
  { error: 'must be an object {label, description?}.' },
);

const QuestionSchema = z.object(
  {
    question: filledText(LIMITS.textChars)
      .describe('The question to ask the user.'),
    header: text()
      .trim()
      .max(MAX_HEADER, { error: `is longer than ${MAX_HEADER} characters; keep it a short label.` })
      .describe('A short label shown above the question (at most 40 characters).')
      .optional(),
    options: z
      .array(OptionSchema, { error: 'must be a list of {label, description?} objects.' })
      .max(MAX_OPTIONS, { error: (i) => `has ${(i.input as unknown[]).length} entries; give ${MIN_OPTIONS}-${MAX_OPTIONS}.` })
      // None (left out, or an empty list: a free-text question) or 2-6; the adapter refuses one
      // option with its own sentence. The schema says exactly that, so a client that checks
      // arguments before sending refuses nothing the relay takes.
      .meta({ anyOf: [{ type: 'array', maxItems: 0 }, { type: 'array', minItems: MIN_OPTIONS }] })
      .describe('The choices to offer, 2-6, one button each. Omit (or give none) for a free-text question. Never add "Other".')
      .optional(),
    multiSelect: z.boolean({ error: 'must be true or false.' }).default(false).describe('Let the user pick several options.'),
  },
  { error: 'must be an object {question, header?, options?, multiSelect?}.' },
);

export const AskUserInputSchema = z.object(
  {
    questions: z
      .array(QuestionSchema, { error: (i) => (i.input === undefined ? 'is required: a list of 1-4 questions.' : 'must be a list of 1-4 questions.') })
      .min(1, { error: 'is empty; ask 1-4 questions.' })
      .max(MAX_QUESTIONS, { error: (i) => `has ${(i.input as unknown[]).length} entries; ask at most ${MAX_QUESTIONS} at once.` })
      .describe('The questions to ask, 1-4; the user answers them one after another.'),
  },
  { error: 'must be an object {questions: [...]}.' },
);
export type AskUserInput = z.infer<typeof AskUserInputSchema>;

/** structuredContent of the result. */
export const AskUserOutputSchema = z.object({
  status: z.enum(['answered', 'skipped', 'expired', 'cancelled']),
  cardId: z.string(),
  answers: z.array(
    z.object({
      question: z.string(),
      header: z.string().optional(),
      selected: z.array(z.string()),
      text: z.string().optional(),
    }),
  ),
});

/** ask_user as tools/list shows it. */
export const ASK_USER_TOOL: ToolDefinition = askTool(ASK_USER, ASK_USER_DESCRIPTION, AskUserInputSchema, AskUserOutputSchema);
