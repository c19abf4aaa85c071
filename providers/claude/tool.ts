import type Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';

// Claude Code's AskUserQuestion and ExitPlanMode, as Claude Code 2.1.332 defines them.
// The tool belongs to the provider: its schema may change with Claude Code updates, so the
// relay validates leniently (unknown fields are kept, a long header is never refused).

export const ASK_USER_QUESTION = 'AskUserQuestion';
export const EXIT_PLAN_MODE = 'ExitPlanMode';

// The exact tool definition Claude Code sends in `tools` (captured from its first request into
// test/providers/golden/claude-code-ask-user-question.json, which the tests compare it with). The relay's own Messages-API loop offers the
// model this same definition, so both engines see one schema. Kept as JSON, byte for byte.
export const ASK_USER_QUESTION_TOOL = {
  "name": "AskUserQuestion",
  "description": "Use this tool only when you are blocked on a decision that is genuinely the user's to make: one you cannot resolve from the request, the code, or sensible defaults.\n\nUsage notes:\n- Users will always be able to select \"Other\" to provide custom text input\n- Use multiSelect: true to allow multiple answers to be selected for a question\n- If you recommend a specific option, make that the first option in the list and add \"(Recommended)\" at the end of the label\n\nPlan mode note: To switch into plan mode, use EnterPlanMode (not this tool). Once in plan mode, use this tool to clarify requirements or choose between approaches BEFORE finalizing your plan. Do NOT use this tool to ask \"Is my plan ready?\", \"Should I proceed?\", or otherwise reference \"the plan\" in questions — the user cannot see the plan until you call ExitPlanMode for approval.\n\nThe user may see only the question dialog: tool results and text you wrote earlier in this turn may not be on their screen while it is open. Make each question stand on its own: if it depends on something you found, say so briefly, and name the items you are asking about in the question itself.\n",
  "input_schema": {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
      "questions": {
        "description": "Questions to ask the user (1-4 questions)",
        "minItems": 1,
        "maxItems": 4,
        "type": "array",
        "items": {
          "type": "object",
          "properties": {
            "question": {
              "description": "The complete question to ask the user. Should be clear, specific, and end with a question mark. Example: \"Which library should we use for date formatting?\" If multiSelect is true, phrase it accordingly, e.g. \"Which features do you want to enable?\"",
              "type": "string"
            },
            "header": {
              "description": "Very short label displayed as a chip/tag (max 12 chars). Examples: \"Auth method\", \"Library\", \"Approach\".",
              "type": "string"
            },
            "options": {
              "description": "The available choices for this question. Must have 2-4 options. Each option should be a distinct, mutually exclusive choice (unless multiSelect is enabled). There should be no 'Other' option, that will be provided automatically.",
              "minItems": 2,
              "maxItems": 4,
              "type": "array",
              "items": {
                "type": "object",
                "properties": {
                  "label": {
                    "description": "The display text for this option that the user will see and select. Should be concise (1-5 words) and clearly describe the choice.",
                    "type": "string"
                  },
                  "description": {
                    "description": "Explanation of what this option means or what will happen if chosen. Useful for providing context about trade-offs or implications.",
                    "type": "string"
                  },
                  "preview": {
                    "description": "Optional preview content rendered when this option is focused. Use for mockups, code snippets, or visual comparisons that help users compare options. See the tool description for the expected content format.",
                    "type": "string"
                  }
                },
                "required": [
                  "label",
                  "description"
                ],
                "additionalProperties": false
              }
            },
            "multiSelect": {
              "description": "Set to true to allow the user to select multiple options instead of just one. Use when choices are not mutually exclusive.",
              "default": false,
              "type": "boolean"
            }
          },
          "required": [
            "question",
            "header",
            "options",
            "multiSelect"
          ],
          "additionalProperties": false
        }
      },
      "answers": {
        "description": "User answers collected by the permission component",
        "type": "object",
        "propertyNames": {
          "type": "string"
        },
        "additionalProperties": {
          "type": "string"
        }
      },
      "annotations": {
        "description": "Optional per-question annotations from the user (e.g., notes on preview selections). Keyed by question text.",
        "type": "object",
        "propertyNames": {
          "type": "string"
        },
        "additionalProperties": {
          "type": "object",
          "properties": {
            "preview": {
              "description": "The preview content of the selected option, if the question used previews.",
              "type": "string"
            },
            "notes": {
              "description": "Free-text notes the user added to their selection.",
              "type": "string"
            }
          },
          "additionalProperties": false
        }
      },
      "metadata": {
        "description": "Optional metadata for tracking and analytics purposes. Not displayed to user.",
        "type": "object",
        "properties": {
          "source": {
            "description": "Optional identifier for the source of this question (e.g., \"remember\" for /remember command). Used for analytics tracking.",
            "type": "string"
          }
        },
        "additionalProperties": false
      }
    },
    "required": [
      "questions"
    ],
    "additionalProperties": false
  }
} satisfies Anthropic.Tool;

// ---- Input validation -------------------------------------------------------------------
// Every message is one sentence that names the field, because the model reads it and must
// be able to fix its call. Limits are the ones Claude Code enforces (1-4 questions, 2-4
// options, unique question texts, unique labels within a question); everything else is
// kept as sent.

type IssueInfo = { readonly path?: readonly PropertyKey[]; readonly input?: unknown };

const fieldName = (path: readonly PropertyKey[] = []) =>
  path.reduce<string>(
    (name, key) => (typeof key === 'number' ? `${name}[${key}]` : name ? `${name}.${String(key)}` : String(key)),
    '',
  );

const kindOf = (value: unknown) =>
  value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;

const mustBe = (what: string) => (iss: IssueInfo) => {
  const name = fieldName(iss.path);
  if (!name) return `The tool input must be ${what}, not ${kindOf(iss.input)}.`;
  return iss.input === undefined ? `${name} is missing; it must be ${what}.` : `${name} must be ${what}, not ${kindOf(iss.input)}.`;
};

const countOf = (what: string, min: number, max: number) => (iss: IssueInfo) => {
  const n = Array.isArray(iss.input) ? iss.input.length : 0;
  return `${fieldName(iss.path)} must hold ${min} to ${max} ${what}; it has ${n}.`;
};

const isEmpty = (iss: IssueInfo) => `${fieldName(iss.path)} is empty; it must contain text.`;

const text = () => z.string({ error: mustBe('a string') });
const nonEmptyText = () => text().refine((s) => s.trim() !== '', { error: isEmpty });

export const AskUserQuestionOptionSchema = z.looseObject(
  {
    label: nonEmptyText(),
    description: text().optional(),
    preview: text().optional(),
  },
  { error: mustBe('an object with a "label"') },
);

export const AskUserQuestionQuestionSchema = z.looseObject(
  {
    question: nonEmptyText(),
    // "max 12 chars" is only a description in Claude Code's schema: longer headers are
    // shortened for display, never refused.
    header: text().optional(),
    options: z
      .array(AskUserQuestionOptionSchema, { error: mustBe('a list of 2 to 4 options') })
      .min(2, { error: countOf('options', 2, 4) })
      .max(4, { error: countOf('options', 2, 4) }),
    multiSelect: z.boolean({ error: mustBe('true or false') }).optional(),
  },
  { error: mustBe('an object with "question" and "options"') },
);

export const AskUserQuestionInputSchema = z
  .looseObject(
    {
      questions: z
        .array(AskUserQuestionQuestionSchema, { error: mustBe('a list of 1 to 4 questions') })
        .min(1, { error: countOf('questions', 1, 4) })
        .max(4, { error: countOf('questions', 1, 4) }),
    },
    { error: mustBe('an object with a "questions" list') },
  )
  .superRefine((input, ctx) => {
    const firstQuestion = new Map<string, number>();
    input.questions.forEach((q, i) => {
      const earlier = firstQuestion.get(q.question);
      if (earlier !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['questions', i, 'question'],
          message: `questions[${i}].question repeats questions[${earlier}].question (${JSON.stringify(q.question)}); question texts must be unique.`,
        });
      } else firstQuestion.set(q.question, i);
      const firstLabel = new Map<string, number>();
      q.options.forEach((o, j) => {
        const before = firstLabel.get(o.label);
        if (before !== undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['questions', i, 'options', j, 'label'],
            message: `questions[${i}].options[${j}].label repeats questions[${i}].options[${before}].label (${JSON.stringify(o.label)}); labels must be unique within a question.`,
          });
        } else firstLabel.set(o.label, j);
      });
    });
  });

export type AskUserQuestionInput = z.infer<typeof AskUserQuestionInputSchema>;
export type AskUserQuestionQuestion = z.infer<typeof AskUserQuestionQuestionSchema>;
