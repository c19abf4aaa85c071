import type { CreateElicitationResponse } from '@agentclientprotocol/sdk';
import { isReservedId, shownLabels, shownText } from '../../src/cards/draft.js';
import type { ElicitationRequest } from '../../src/cards/elicitation-form.js';
import { LIMITS, type Card, type CardDraft } from '../../src/cards/model.js';
import { NONE_OF_THE_ABOVE, NOTE_SUFFIX, REQUEST_USER_INPUT } from './tool.js';

// Pure: Codex's request_user_input, as codex-acp sends it (an ACP form elicitation), becomes
// a question card, one step per question, its options in Codex's order with their
// descriptions, "None of the above" left out (typing an answer is that option); the card comes
// back as the form's content, which Codex turns into the function_call_output its model reads:
//   picked "Postgres"              → {db: "Postgres"}                         → {"answers":{"db":{"answers":["Postgres"]}}}
//   typed "MySQL"                  → {db: "None of the above", db_note: "MySQL"} → ["None of the above","user_note: MySQL"]
//   picked "Postgres", typed "…"   → {db: "Postgres", db_note: "…"}          → ["Postgres","user_note: …"]
// Skipped → decline; expired, cancelled or stopped → cancel.

interface Choice {
  const?: unknown;
  title?: string;
  description?: string;
}
interface Property {
  type?: string;
  title?: string;
  description?: string;
  oneOf?: Choice[];
  _meta?: { codex?: { role?: string; questionId?: string } };
}

interface CodexQuestion {
  /** The property (Codex's question id). */
  name: string;
  /** The card's question id: the name when it is a usable id. */
  id: string;
  header: string;
  text: string;
  /** Label shown → the value Codex wants. */
  values: Map<string, string>;
  options: { label: string; description?: string }[];
  /** Its note property, when Codex gave one. */
  note?: string;
}

const ID = /^[A-Za-z0-9_.-]{1,64}$/;

/** The questions of a form codex-acp made for request_user_input; undefined for any other form. */
export function codexQuestions(request: ElicitationRequest): CodexQuestion[] | undefined {
  const properties = (request.requestedSchema?.properties ?? {}) as Record<string, Property>;
  const entries = Object.entries(properties);
  if (!entries.length || !entries.every(([, p]) => p?._meta?.codex)) return undefined;
  return entries
    .filter(([, p]) => p._meta?.codex?.role !== 'user_note')
    .map(([name, p], i) => {
      const choices = (p.oneOf ?? []).filter((c) => String(c.const) !== NONE_OF_THE_ABOVE);
      const labels = shownLabels(choices.map((c) => String(c.title ?? c.const)));
      const shown = choices.flatMap((c, k) => (labels[k] === undefined ? [] : [{ label: labels[k]!, value: String(c.const), description: c.description }]));
      const note = `${name}${NOTE_SUFFIX}`;
      return {
        name,
        id: ID.test(name) && !isReservedId(name) ? name : `q${i + 1}`,
        header: shownText(p.description, 12, shownText(name, 12, `Question ${i + 1}`)),
        text: shownText(p.title, LIMITS.textChars, shownText(p.description, LIMITS.textChars, name)),
        values: new Map(shown.map((c) => [c.label, c.value])),
        options: shown.slice(0, LIMITS.options).map((c) => (c.description ? { label: c.label, description: shownText(c.description, LIMITS.descriptionChars, '') } : { label: c.label })),
        ...(Object.hasOwn(properties, note) ? { note } : {}),
      };
    });
}

export function questionDraft(questions: CodexQuestion[]): CardDraft {
  return {
    tool: REQUEST_USER_INPUT,
    origin: 'native',
    kind: 'question',
    layout: 'steps',
    questions: questions.map((q) => ({
      id: q.id,
      header: q.header,
      text: q.text,
      ...(q.options.length ? { options: q.options } : {}),
      multiSelect: false,
      // Codex takes the user's own words in every question's note.
      freeText: true,
    })),
  };
}

export function questionContent(questions: CodexQuestion[], card: Card): CreateElicitationResponse {
  if (card.status === 'skipped') return { action: 'decline' };
  if (card.status !== 'answered' || !card.answer) return { action: 'cancel' };
  const content: Record<string, string> = {};
  for (const q of questions) {
    const entry = Object.hasOwn(card.answer, q.id) ? card.answer[q.id] : undefined;
    if (!entry) continue;
    const picked = entry.selected[0];
    const text = entry.text?.trim();
    content[q.name] = picked !== undefined ? (q.values.get(picked) ?? picked) : NONE_OF_THE_ABOVE;
    if (text && q.note) content[q.note] = text;
  }
  return { action: 'accept', content };
}
