import { z } from 'zod';
import type { Card, CardDraft } from './model.js';

// An ask tool in one provider's dialect (Cursor's ask_user, OpenClaw's), as plain data and
// pure functions: what the model is shown, tool arguments → card draft, closed card → the
// tool result. A provider declares one (providers/<id>/runner.ts); the composition root
// hands it to the surface that serves it (the MCP endpoint, src/server/mcp/), which owns
// every bit of I/O around a call. Declared here, with the cards, so that neither side
// imports the other.

type JsonSchema = { type: 'object'; [key: string]: unknown };

/** A tool as a model is shown it (MCP's tools/list): the schemas are derived from zod (toolJsonSchema). */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
}

export interface AskDialect<Result = unknown, Failure = unknown> {
  /** The dialect's name (cursor, openclaw). */
  name: string;
  /** The provider id its cards carry; calls of one dialect never re-attach to another's cards. */
  provider: string;
  tool: ToolDefinition;
  toCardDraft(args: unknown): { ok: true; draft: CardDraft } | { ok: false; error: string };
  toToolResult(card: Card): Result;
  /** A call the relay could not take: one sentence naming the field, as the tool's error result. */
  toToolError(message: string): Failure;
  /**
   * Set when the dialect allows one pending question per session (OpenClaw's): the refusal of
   * a second, different question while the first waits. The same call sent again is not a second.
   */
  onePendingPerSession?: string;
}

/**
 * The JSON Schema of a tool's input or output, derived from the one zod schema that also
 * checks it. Checks written as `.refine` (the relay's own card limits) are enforced but not
 * shown; `.meta({...})` adds what the model is told beyond what zod states. `$schema` is
 * dropped, and so are `propertyNames: {type: "string"}`, which every JSON object's keys are,
 * and `additionalProperties: {}`, which allows what its absence allows.
 */
export function toolJsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _drop, ...json } = z.toJSONSchema(schema, {
    io: 'input',
    override: ({ jsonSchema }) => {
      const names = jsonSchema.propertyNames;
      if (typeof names === 'object' && names !== null && Object.keys(names).length === 1 && (names as { type?: unknown }).type === 'string') {
        delete jsonSchema.propertyNames;
      }
      // `additionalProperties: {}` allows what leaving it out allows; strict checkers warn about it.
      const extra = jsonSchema.additionalProperties;
      if (typeof extra === 'object' && extra !== null && Object.keys(extra).length === 0) delete jsonSchema.additionalProperties;
      // z.int()'s bounds are the safe integers: every whole number a client would send.
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER && jsonSchema.maximum === Number.MAX_SAFE_INTEGER) {
        delete jsonSchema.minimum;
        delete jsonSchema.maximum;
      }
    },
  }) as Record<string, unknown>;
  return { ...json, type: 'object' };
}

/** An ask tool as a model is shown it: its schemas derived from the zod schemas that check them. */
export function askTool(name: string, description: string, input: z.ZodType, output: z.ZodType): ToolDefinition {
  return { name, title: 'Ask the user', description, inputSchema: toolJsonSchema(input), outputSchema: toolJsonSchema(output) };
}

/** A text argument; its messages are relative to the field (the adapter puts the path in front). */
export const toolText = (required = false) =>
  z.string({ error: (i) => (i.input === undefined && required ? 'is required.' : 'must be a text.') });

/**
 * A required text, trimmed, not empty and at most `max` characters: the relay's own card
 * limit, checked as a refinement so that it is not part of the schema the model is shown.
 */
export const filledText = (max: number) =>
  toolText(true)
    .trim()
    .refine((s) => s.length > 0, { error: 'is empty.' })
    .refine((s) => s.length <= max, { error: `is longer than ${max} characters.` });

/** An optional text's own limit, checked the same way. */
export const atMost = (max: number) => (s: string) => s.length <= max;
