import { isReservedId, shownLabels, shownText } from './draft.js';
import { LIMITS, type AnswerEntry, type Card, type CardDraft, type FieldType, type QuestionInput } from './model.js';

// A form elicitation (MCP's shape, which Copilot's form-style ask_user and the Agent Client
// Protocol's elicitation/create both use): {message, requestedSchema} becomes a form card
// with one field per property, and the card comes back as {action: "accept", content} |
// {action: "decline"} | {action: "cancel"}. The agent owns the schema: texts are cut and
// labels shaped, never refused.

interface Choice {
  const?: unknown;
  title?: string;
  description?: string;
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
  /** The schema wants an array (also when the card could not offer several picks): typed text is split on commas. */
  list: boolean;
  /** Option label → the value the schema wants (an enum value or a const). */
  values: Map<string, string>;
  question: QuestionInput;
}

const ID = /^[A-Za-z0-9_.-]{1,64}$/;

/** The card's id for a field: its name when that is a usable id (not `constructor`, `__proto__`, …), else `field<n>`. */
const fieldId = (name: string, i: number) => (ID.test(name) && !isReservedId(name) ? name : `field${i + 1}`);

function choicesOf(schema: FieldSchema): { label: string; value: string; description?: string }[] {
  const fromList = (list: Choice[]) =>
    list.map((c) => ({ label: String(c.title ?? c.const), value: String(c.const), ...(typeof c.description === 'string' && c.description ? { description: c.description } : {}) }));
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
    const label = shownText(schema.title, 12, shownText(name, 12, `Field ${i + 1}`));
    const id = fieldId(name, i);
    // The runtime owns this schema: texts are cut and labels shaped (shownLabels), never refused.
    const labels = shownLabels(choices.map((c) => c.label));
    const shown = choices.flatMap((c, k) => (labels[k] === undefined ? [] : [{ label: labels[k], value: c.value, description: c.description }])).slice(0, LIMITS.options);
    // A list needs two options to pick several; with fewer it is one pick or typed text
    // (split on commas), and a choice with nothing to pick from is typed in.
    const type: FieldType =
      schema.type === 'array' ? (shown.length >= 2 ? 'choices' : shown.length ? 'choice' : 'string')
      : schema.type === 'boolean' ? 'boolean'
      : schema.type === 'number' || schema.type === 'integer' ? 'number'
      : shown.length ? 'choice' : 'string';
    return {
      name,
      id,
      type,
      list: schema.type === 'array',
      values: new Map(shown.map((c) => [c.label, c.value])),
      question: {
        id,
        header: label,
        text: shownText(schema.description, LIMITS.textChars, shownText(schema.title, LIMITS.textChars, shownText(name, LIMITS.textChars, `Field ${i + 1}`))),
        options:
          type === 'choice' || type === 'choices'
            ? shown.map((c) => (c.description ? { label: c.label, description: shownText(c.description, LIMITS.descriptionChars, '') } : c.label))
            : undefined,
        multiSelect: type === 'choices',
        // The runtime tells the model the user may always answer in their own words.
        ...(type === 'choice' || type === 'choices' ? { freeText: true } : {}),
        field: { type },
      },
    };
  });
}

/** Who asks and through which tool: Copilot's ask_user, an ACP agent's elicitation. */
export interface FormAsker {
  tool: string;
  /** The card's title when the message is empty: "<name> asks:". */
  name: string;
}

export function formCardDraft(request: ElicitationRequest, asker: FormAsker): CardDraft {
  const fields = fieldsOf(request);
  const message = String(request.message ?? '');
  const fallback = `${asker.name} asks:`;
  return {
    tool: asker.tool,
    origin: 'native',
    kind: 'question',
    layout: 'form',
    title: shownText(message, LIMITS.titleChars, fallback),
    // A form without fields still needs one thing to answer: a plain reply.
    questions: fields.length ? fields.map((f) => f.question) : [{ id: 'reply', text: shownText(message, LIMITS.textChars, fallback), field: { type: 'string' } }],
  };
}

/** A skip declines, an expiry or a stop cancels; never throws. */
export function formResult(request: ElicitationRequest, card: Card): ElicitationResult {
  if (card.status === 'skipped') return { action: 'decline' };
  if (card.status !== 'answered' || !card.answer) return { action: 'cancel' };
  const answer = card.answer;
  const value = (field: Field, entry: AnswerEntry): string | number | boolean | string[] => {
    const picked = entry.selected.map((l) => field.values.get(l) ?? l);
    if (field.type === 'choices') return entry.text ? [...picked, entry.text] : picked;
    if (field.type === 'boolean') return entry.selected[0] === 'Yes';
    if (field.type === 'number') return Number(entry.text);
    if (field.list) return [...picked, ...(entry.text ?? '').split(',').map((v) => v.trim()).filter(Boolean)];
    return picked[0] ?? entry.text ?? '';
  };
  // fromEntries: a field named "__proto__" stays a field of the content, never its prototype.
  const content = Object.fromEntries(
    fieldsOf(request).flatMap((field) => {
      const entry = Object.hasOwn(answer, field.id) ? answer[field.id] : undefined;
      return entry ? [[field.name, value(field, entry)]] : [];
    }),
  );
  return { action: 'accept', content };
}
