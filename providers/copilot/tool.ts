import { z } from 'zod';

// askrelay's own ask_user for the Copilot SDK engine. It replaces Copilot's built-in one
// (overridesBuiltInTool), so this schema is ours: the model sees exactly this.

export const ASK_USER = 'ask_user';
/** The relay keeps the first 8 choices and drops the rest (docs/providers/copilot.md). */
export const MAX_CHOICES = 8;

export const ASK_USER_DESCRIPTION = [
  'Ask the user a question and wait for the answer. Use it whenever you need a decision or input from the user;',
  'never ask in plain text. Offer a short list of choices (one button each, at most 8; put the one you recommend',
  'first and end its label with "(Recommended)"); omit choices only when the answer must be free text. The user can',
  'always type their own answer, so never add an "Other" choice. Set multi_select when several choices may be picked.',
].join(' ');

export const ASK_USER_PARAMETERS = {
  type: 'object',
  properties: {
    question: { type: 'string', description: 'The question to ask the user.' },
    choices: {
      type: 'array',
      items: { type: 'string' },
      description: 'Options to offer, one button each; the relay keeps the first 8.',
    },
    multi_select: { type: 'boolean', description: 'Let the user pick several choices; the answer lists each one, separated by ",".' },
  },
  required: ['question'],
} as const;

// The runtime hands the handler the model's arguments unchecked, so they are checked here.
export const AskUserInputSchema = z.object({
  question: z.string({ error: 'question is required: the text of the question to ask.' }).trim().min(1, { error: 'question is empty.' }),
  choices: z
    .array(z.string({ error: 'every choice must be a text.' }), { error: 'choices must be a list of texts.' })
    .optional(),
  multi_select: z.boolean({ error: 'multi_select must be true or false.' }).optional(),
}, { error: 'the arguments must be an object: {question, choices?, multi_select?}.' });
export type AskUserInput = z.infer<typeof AskUserInputSchema>;

/**
 * A relay tool's JSON schema as handed to the Copilot runtime. The runtime passes only the
 * keywords it supports to the model and turns the others into text (`minLength: 1` becomes
 * `"description": "{minLength: 1}"`), so the validation-only ones are dropped here; the
 * relay tool checks its input itself.
 */
export function copilotToolSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(copilotToolSchema);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'minLength' || key === 'propertyNames') continue;
    // Under `properties` the keys are field names, never keywords.
    out[key] = key === 'properties' && value && typeof value === 'object'
      ? Object.fromEntries(Object.entries(value).map(([field, sub]) => [field, copilotToolSchema(sub)]))
      : copilotToolSchema(value);
  }
  return out;
}

/** Copilot's form-style ask_user as src/cards/elicitation-form.ts asks it. */
export const COPILOT_FORM = { tool: ASK_USER, name: 'Copilot' } as const;
