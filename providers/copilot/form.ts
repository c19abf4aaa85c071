import type { Card, CardDraft, FieldType, QuestionInput } from '../../src/cards/model.js';
import { ASK_USER } from './tool.js';

// Copilot's form-style ask_user (askUserVariant "elicitation", CLI ≥ 1.0.102):
// {message, requestedSchema} becomes a form card with one field per property, and the
// card comes back as {action: "accept", content} | {action: "decline"} | {action: "cancel"}.

interface Choice {
  const?: unknown;
  title?: string;
}
interface FieldSchema {
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  enumNames?: string[];
  oneOf?: Choice[];
  anyOf?: Choice[];
  items?: { enum?: unknown[]; anyOf?: Choice[]; oneOf?: Choice[] };
}
export interface ElicitationRequest {
  message?: string;
  requestedSchema?: { properties?: Record<string, FieldSchema> };
}
export type ElicitationResult =
  | { action: 'accept'; content: Record<string, string | number | boolean | string[]> }
  | { action: 'decline' }
  | { action: 'cancel' };

interface Field {
  name: string;
  id: string;
  type: FieldType;
  /** Option label → the value the schema wants (an enum value or a const). */
  values: Map<string, string>;
  question: QuestionInput;
}

const ID = /^[A-Za-z0-9_.-]{1,64}$/;

function choicesOf(schema: FieldSchema): { label: string; value: string }[] {
  const fromList = (list: Choice[]) => list.map((c) => ({ label: String(c.title ?? c.const), value: String(c.const) }));
  if (schema.enum) return schema.enum.map((v, i) => ({ label: String(schema.enumNames?.[i] ?? v), value: String(v) }));
  if (schema.oneOf) return fromList(schema.oneOf);
  if (schema.anyOf) return fromList(schema.anyOf);
  const items = schema.items ?? {};
  if (items.enum) return items.enum.map((v) => ({ label: String(v), value: String(v) }));
  return fromList(items.anyOf ?? items.oneOf ?? []);
}

function fieldsOf(request: ElicitationRequest): Field[] {
  return Object.entries(request.requestedSchema?.properties ?? {}).map(([name, schema], i) => {
    const choices = choicesOf(schema);
    const type: FieldType =
      schema.type === 'array' ? 'choices'
      : schema.type === 'boolean' ? 'boolean'
      : schema.type === 'number' || schema.type === 'integer' ? 'number'
      : choices.length ? 'choice' : 'string';
    const label = schema.title ?? name;
    return {
      name,
      id: ID.test(name) ? name : `field${i + 1}`,
      type,
      values: new Map(choices.map((c) => [c.label, c.value])),
      question: {
        id: ID.test(name) ? name : `field${i + 1}`,
        header: label.length > 12 ? `${label.slice(0, 11)}…` : label,
        text: schema.description ?? label,
        options: type === 'choice' || type === 'choices' ? choices.map((c) => c.label) : undefined,
        multiSelect: type === 'choices',
        // The runtime tells the model the user may always answer in their own words.
        ...(type === 'choice' || type === 'choices' ? { freeText: true } : {}),
        field: { type },
      },
    };
  });
}

export function formCardDraft(request: ElicitationRequest): CardDraft {
  const fields = fieldsOf(request);
  const message = String(request.message ?? '').trim() || 'Copilot asks:';
  return {
    tool: ASK_USER,
    origin: 'native',
    kind: 'question',
    layout: 'form',
    title: message,
    // A form without fields still needs one thing to answer: a plain reply.
    questions: fields.length ? fields.map((f) => f.question) : [{ id: 'reply', text: message, field: { type: 'string' } }],
  };
}

/** A skip declines, an expiry or a stop cancels; never throws. */
export function formResult(request: ElicitationRequest, card: Card): ElicitationResult {
  if (card.status === 'skipped') return { action: 'decline' };
  if (card.status !== 'answered' || !card.answer) return { action: 'cancel' };
  const content: Record<string, string | number | boolean | string[]> = {};
  for (const field of fieldsOf(request)) {
    const entry = card.answer[field.id];
    if (!entry) continue;
    const picked = entry.selected.map((l) => field.values.get(l) ?? l);
    if (field.type === 'choices') content[field.name] = entry.text ? [...picked, entry.text] : picked;
    else if (field.type === 'boolean') content[field.name] = entry.selected[0] === 'Yes';
    else if (field.type === 'number') content[field.name] = Number(entry.text);
    else content[field.name] = picked[0] ?? entry.text ?? '';
  }
  return { action: 'accept', content };
}
