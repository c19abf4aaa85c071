import { z } from 'zod';
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

/** The JSON Schema the model sees (tools/list). */
export const ASK_USER_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    questions: {
      type: 'array',
      minItems: 1,
      maxItems: MAX_QUESTIONS,
      description: 'The questions to ask, 1-4; the user answers them one after another.',
      items: {
        type: 'object',
        properties: {
          question: { type: 'string', description: 'The question to ask the user.' },
          header: { type: 'string', maxLength: MAX_HEADER, description: 'A short label shown above the question (at most 40 characters).' },
          options: {
            type: 'array',
            minItems: MIN_OPTIONS,
            maxItems: MAX_OPTIONS,
            description: 'The choices to offer, 2-6, one button each. Omit for a free-text question. Never add "Other".',
            items: {
              type: 'object',
              properties: {
                label: { type: 'string', description: 'The text of the choice; unique within the question.' },
                description: { type: 'string', description: 'What picking this choice means.' },
              },
              required: ['label'],
            },
          },
          multiSelect: { type: 'boolean', default: false, description: 'Let the user pick several options.' },
        },
        required: ['question'],
      },
    },
  },
  required: ['questions'],
} as const;

/** The JSON Schema of structuredContent (tools/list outputSchema). */
export const ASK_USER_OUTPUT_SCHEMA = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['answered', 'skipped', 'expired', 'cancelled'] },
    cardId: { type: 'string' },
    answers: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          question: { type: 'string' },
          header: { type: 'string' },
          selected: { type: 'array', items: { type: 'string' } },
          text: { type: 'string' },
        },
        required: ['question', 'selected'],
      },
    },
  },
  required: ['status', 'cardId', 'answers'],
} as const;

// The model's arguments. Every message is relative to the field it is about: the adapter
// puts the field's path in front ("questions[1].options has 7 entries; give 2-6.").
// Unknown fields are dropped.
const text = (required = false) =>
  z.string({ error: (i) => (i.input === undefined && required ? 'is required.' : 'must be a text.') });

const OptionSchema = z.object(
  {
    label: text(true).trim().min(1, { error: 'is empty.' }).max(LIMITS.labelChars, { error: `is longer than ${LIMITS.labelChars} characters.` }),
    description: text().trim().max(LIMITS.descriptionChars, { error: `is longer than ${LIMITS.descriptionChars} characters.` }).optional(),
  },
  { error: 'must be an object {label, description?}.' },
);

const QuestionSchema = z.object(
  {
    question: text(true).trim().min(1, { error: 'is empty.' }).max(LIMITS.textChars, { error: `is longer than ${LIMITS.textChars} characters.` }),
    header: text().trim().max(MAX_HEADER, { error: `is longer than ${MAX_HEADER} characters; keep it a short label.` }).optional(),
    options: z
      .array(OptionSchema, { error: 'must be a list of {label, description?} objects.' })
      .max(MAX_OPTIONS, { error: (i) => `has ${(i.input as unknown[]).length} entries; give ${MIN_OPTIONS}-${MAX_OPTIONS}.` })
      .optional(),
    multiSelect: z.boolean({ error: 'must be true or false.' }).optional(),
  },
  { error: 'must be an object {question, header?, options?, multiSelect?}.' },
);

export const AskUserInputSchema = z.object(
  {
    questions: z
      .array(QuestionSchema, { error: (i) => (i.input === undefined ? 'is required: a list of 1-4 questions.' : 'must be a list of 1-4 questions.') })
      .min(1, { error: 'is empty; ask 1-4 questions.' })
      .max(MAX_QUESTIONS, { error: (i) => `has ${(i.input as unknown[]).length} entries; ask at most ${MAX_QUESTIONS} at once.` }),
  },
  { error: 'must be an object {questions: [...]}.' },
);
export type AskUserInput = z.infer<typeof AskUserInputSchema>;
