import { RelayError } from '../errors.js';
import { LIMITS, type CardOption, type Layout, type Question, type QuestionInput } from './model.js';
import { clip, isBlank } from './text.js';

// Turns what an asker sent into the card's questions, or refuses with one sentence that
// names the field. Provider dialects apply their own stricter rules before this.

const ID_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Whether an id is a name every JavaScript object already has (`__proto__`, `constructor`,
 * `toString`, …). Answers are objects keyed by question id, so such an id could read or
 * set what objects inherit instead of an answer: refused for cards, renamed by adapters
 * whose ids come from a provider.
 */
export const isReservedId = (id: string) => Object.hasOwn(Object.prototype, id);

// Free text is always offered, so an agent's own "Other" option is noise: drop it.
const OTHER_OPTION = /^\s*(other|something else|none of the above)\s*(\(.*\)|[.:…]+|\s*\.\.\.)?\s*$/i;

export const isOtherOption = (label: string) => OTHER_OPTION.test(label);

/**
 * What an ask tool refuses among a question's option labels, as one sentence for the model:
 * an "Other" option, or a label given twice (case ignored). `uniqueRule` ends that sentence.
 */
export function optionLabelProblem(where: string, labels: readonly string[], uniqueRule: string): string | undefined {
  const seen = new Set<string>();
  for (const [i, label] of labels.entries()) {
    if (isOtherOption(label)) return `${where}.options[${i}] "${label}" is not allowed: the user can always type their own answer, so leave out "Other".`;
    const key = label.toLowerCase();
    if (seen.has(key)) return `${where}.options has the label "${label}" twice; ${uniqueRule}.`;
    seen.add(key);
  }
  return undefined;
}

/**
 * How the option labels of a provider-owned tool are shown on a card. The provider owns
 * that schema (docs/architecture.md), so its labels are shaped to pass the card's rules rather than
 * refused: trimmed, cut to LIMITS.labelChars, a label that shows nothing named by its
 * place ("Option 2"), labels that end up alike (case ignored) told apart by " (2)", and
 * "Other"-like ones left out (undefined). Entry i belongs to labels[i], so an answer finds
 * its way back to the label the provider sent.
 */
export function shownLabels(labels: readonly string[]): (string | undefined)[] {
  const taken = new Set<string>();
  return labels.map((raw, i) => {
    const trimmed = isBlank(raw) ? `Option ${i + 1}` : raw.trim();
    if (isOtherOption(trimmed)) return undefined;
    let label = clip(trimmed, LIMITS.labelChars);
    for (let n = 2; taken.has(label.toLowerCase()); n++) {
      const suffix = ` (${n})`;
      label = clip(trimmed, LIMITS.labelChars - suffix.length) + suffix;
    }
    taken.add(label.toLowerCase());
    return label;
  });
}

/** A provider-owned text as a card shows it: trimmed and cut to `max`, or `fallback` when it shows nothing. */
export function shownText(text: string | undefined, max: number, fallback: string): string {
  return text === undefined || isBlank(text) ? fallback : clip(text.trim(), max);
}

function invalid(message: string): never {
  throw new RelayError('invalid_card', message);
}

/** An optional text trimmed; undefined when it shows nothing (as if it had been left out). */
const visible = (text: string | undefined) => (text === undefined || isBlank(text) ? undefined : text.trim());

/** A card's title trimmed, left out when it shows nothing, refused over LIMITS.titleChars. */
export function normalizeTitle(title: string | undefined): string | undefined {
  const shown = visible(title);
  if (shown && shown.length > LIMITS.titleChars) invalid(`title is longer than ${LIMITS.titleChars} characters.`);
  return shown;
}

function normalizeOptions(input: QuestionInput, where: string, keepOther: boolean): CardOption[] {
  const raw = input.options ?? [];
  const seen = new Set<string>();
  const options: CardOption[] = [];
  raw.forEach((entry, i) => {
    const option = typeof entry === 'string' ? { label: entry } : entry;
    const label = option.label.trim();
    if (!label) invalid(`${where}.options[${i}].label is empty.`);
    if (isBlank(label)) invalid(`${where}.options[${i}].label shows nothing: it holds only invisible characters.`);
    if (label.length > LIMITS.labelChars) {
      invalid(`${where}.options[${i}].label is longer than ${LIMITS.labelChars} characters.`);
    }
    if (!keepOther && isOtherOption(label)) return;
    const key = label.toLowerCase();
    if (seen.has(key)) invalid(`${where}.options has "${label}" twice; labels must be unique.`);
    seen.add(key);
    const description = visible(option.description);
    if (description && description.length > LIMITS.descriptionChars) {
      invalid(`${where}.options[${i}].description is longer than ${LIMITS.descriptionChars} characters.`);
    }
    options.push(description ? { label, description } : { label });
  });
  if (options.length > LIMITS.options) {
    invalid(`${where}.options has ${options.length} options; at most ${LIMITS.options} are allowed.`);
  }
  return options;
}

const BOOLEAN_OPTIONS: CardOption[] = [{ label: 'Yes' }, { label: 'No' }];

function normalizeQuestion(input: QuestionInput, index: number, layout: Layout, keepOther: boolean): Question {
  const where = `questions[${index}]`;
  const text = input.text.trim();
  if (!text) invalid(`${where}.text is empty.`);
  if (isBlank(text)) invalid(`${where}.text shows nothing: it holds only invisible characters.`);
  if (text.length > LIMITS.textChars) invalid(`${where}.text is longer than ${LIMITS.textChars} characters.`);
  const id = input.id?.trim() || `q${index + 1}`;
  if (!ID_PATTERN.test(id)) invalid(`${where}.id "${id}" may hold only letters, digits, "_", "-" and "." (1-64).`);
  if (isReservedId(id)) invalid(`${where}.id "${id}" is reserved (every JavaScript object has it); choose another id.`);
  const header = visible(input.header);
  if (header && header.length > LIMITS.headerChars) {
    invalid(`${where}.header is longer than ${LIMITS.headerChars} characters.`);
  }

  let options = normalizeOptions(input, where, keepOther);
  let multiSelect = input.multiSelect ?? false;
  let freeText = input.freeText ?? true;
  let field: Question['field'];

  if (layout === 'form') {
    const type = input.field?.type ?? (options.length === 0 ? 'string' : multiSelect ? 'choices' : 'choice');
    field = { type };
    if (type === 'boolean') options = BOOLEAN_OPTIONS;
    if (type === 'boolean' || type === 'choice' || type === 'choices') freeText = input.freeText ?? false;
    if (type === 'choices') multiSelect = true;
    if (type === 'choice') multiSelect = false;
    if ((type === 'choice' || type === 'choices') && options.length === 0) {
      invalid(`${where} is a ${type} field but has no options.`);
    }
    if (type === 'string' || type === 'number') {
      if (options.length) invalid(`${where} is a ${type} field and cannot have options.`);
      freeText = true;
    }
  }
  if (multiSelect && options.length < 2) invalid(`${where}.multiSelect needs at least 2 options.`);
  if (!freeText && options.length === 0) invalid(`${where} has no options and no free text: nothing could answer it.`);
  return { id, ...(header ? { header } : {}), text, options, multiSelect, freeText, ...(field ? { field } : {}) };
}

export function normalizeQuestions(inputs: QuestionInput[], layout: Layout, { keepOther = false } = {}): Question[] {
  if (inputs.length === 0) invalid('questions is empty; ask at least one question.');
  if (inputs.length > LIMITS.questions) {
    invalid(`questions has ${inputs.length} entries; at most ${LIMITS.questions} are allowed.`);
  }
  const questions = inputs.map((q, i) => normalizeQuestion(q, i, layout, keepOther));
  const ids = new Set<string>();
  for (const q of questions) {
    if (ids.has(q.id)) invalid(`questions has the id "${q.id}" twice; ids must be unique.`);
    ids.add(q.id);
  }
  return questions;
}
