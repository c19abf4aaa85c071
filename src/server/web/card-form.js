// The form layout: every question at once as a field, one Submit.
import { $, h, nextId } from './dom.js';
import { fieldAnswer, fieldType, answerable } from './card-draft.js';
import { withInlineMarkdown } from './markdown-view.js';
import { clearError, showError, submit } from './card-actions.js';

export function renderForm(entry) {
  const { card, parts } = entry;
  const fields = card.questions.map((q, i) => renderField(q, i, () => fieldChanged(entry, q)));
  const form = h('form', {
    class: 'form',
    dataset: { testid: 'form' },
    novalidate: true,
    onsubmit: (e) => {
      e.preventDefault();
      submitForm(entry);
    },
  },
    fields,
    h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: 'primary', dataset: { testid: 'submit' } }, 'Submit')),
  );
  parts.body.replaceChildren(form);
}

// Fields are numbered 1, 2, 3… down the form (the badge on their left): a number key on a
// selected form card goes to that field.
function renderField(q, index, onchange) {
  const type = fieldType(q);
  const id = nextId('field');
  const head = (labelFor) => [
    h('span', { class: 'key small-key', 'aria-hidden': 'true', dataset: { testid: 'field-key' } }, String(index + 1)),
    q.header ? h('span', { class: 'chip chip-header' }, q.header) : null,
    withInlineMarkdown(h(labelFor ? 'label' : 'span', { class: 'field-text', for: labelFor, id: `${id}-label` }), q.text),
  ];
  const wrap = (...children) =>
    h('div', { class: `form-field field-${type}`, dataset: { testid: 'field', questionId: q.id, type }, oninput: onchange, onchange }, children);

  if (type === 'string' || type === 'number') {
    return wrap(
      h('div', { class: 'field-head' }, head(id)),
      h('input', {
        id,
        type: type === 'number' ? 'number' : 'text',
        step: type === 'number' ? 'any' : undefined,
        inputmode: type === 'number' ? 'decimal' : undefined,
        class: 'text-input',
        name: q.id,
        autocomplete: 'off',
        dataset: { testid: 'field-input' },
      }),
    );
  }

  const many = type === 'choices';
  let control;
  if (!many && type !== 'boolean' && q.options.length > 6) {
    control = h('select', { id, class: 'select', name: q.id, dataset: { testid: 'field-input' }, 'aria-labelledby': `${id}-label` },
      h('option', { value: '' }, 'Choose…'),
      q.options.map((o) => h('option', { value: o.label }, o.description ? `${o.label} — ${o.description}` : o.label)),
    );
  } else {
    control = h('div', { class: `choices${type === 'boolean' ? ' segmented' : ''}`, role: many ? 'group' : 'radiogroup', 'aria-labelledby': `${id}-label` },
      q.options.map((o) =>
        h('label', { class: 'choice' },
          h('input', { type: many ? 'checkbox' : 'radio', name: `${id}-${q.id}`, value: o.label, dataset: { testid: 'field-option' } }),
          h('span', { class: 'choice-box', 'aria-hidden': 'true' }),
          h('span', { class: 'choice-main' },
            h('span', { class: 'option-label' }, o.label),
            o.description ? withInlineMarkdown(h('span', { class: 'option-desc' }), o.description) : null,
          ),
        )),
    );
  }
  return wrap(
    h('div', { class: 'field-head' }, head(null)),
    control,
    q.freeText
      ? h('input', { type: 'text', class: 'text-input other', name: `${q.id}-text`, 'aria-label': `${q.text} (your own answer)`, placeholder: 'Or type your own answer…', dataset: { testid: 'field-text' } })
      : null,
  );
}

/** The form's values as a saved draft's questions (drafts.js). */
export function formDraft(entry) {
  const questions = {};
  for (const q of entry.card.questions) {
    const fieldEl = $(`[data-testid="field"][data-question-id="${CSS.escape(q.id)}"]`, entry.parts.body);
    const value = fieldEl && readField(fieldEl, q);
    if (value && (value.selected.length || value.text)) questions[q.id] = value;
  }
  return { step: 0, questions };
}

/** A saved draft's values put back in the form's fields. */
export function fillForm(entry, saved) {
  for (const q of entry.card.questions) {
    const s = saved?.questions?.[q.id];
    // Called while the card is made: its body, not yet its element.
    const fieldEl = $(`[data-testid="field"][data-question-id="${CSS.escape(q.id)}"]`, entry.parts.body);
    if (!s || !fieldEl) continue;
    const selected = new Set(Array.isArray(s.selected) ? s.selected : []);
    const text = typeof s.text === 'string' ? s.text : '';
    const type = fieldType(q);
    if (type === 'string' || type === 'number') {
      $('[data-testid="field-input"]', fieldEl).value = text;
      continue;
    }
    const select = $('select', fieldEl);
    if (select) select.value = [...selected].find((label) => q.options.some((o) => o.label === label)) ?? '';
    for (const input of fieldEl.querySelectorAll('input[data-testid="field-option"]')) input.checked = selected.has(input.value);
    const other = $('[data-testid="field-text"]', fieldEl);
    if (other) other.value = text;
  }
}

function readField(fieldEl, q) {
  const type = fieldType(q);
  if (type === 'string' || type === 'number') {
    const value = $('[data-testid="field-input"]', fieldEl).value.trim();
    return { selected: [], text: value };
  }
  const select = $('select', fieldEl);
  const selected = select
    ? select.value ? [select.value] : []
    : [...fieldEl.querySelectorAll('input[data-testid="field-option"]:checked')].map((i) => i.value);
  const other = $('[data-testid="field-text"]', fieldEl)?.value.trim() ?? '';
  return { selected, text: other };
}

function submitForm(entry) {
  const { card, ui } = entry;
  if (!answerable(entry) || ui.busy) return;
  clearError(entry);
  const answers = {};
  for (const q of card.questions) {
    const fieldEl = $(`[data-testid="field"][data-question-id="${CSS.escape(q.id)}"]`, entry.el);
    const checked = fieldAnswer(q, readField(fieldEl, q));
    fieldEl.classList.remove('invalid');
    if (checked.error) {
      fieldEl.classList.add('invalid');
      ui.invalidField = q.id;
      showError(entry, checked.error);
      $('input, select', fieldEl)?.focus();
      return;
    }
    answers[q.id] = checked.answer;
  }
  submit(entry, answers);
}

/** A field that was marked invalid is cleared, with its error, once it holds a value. */
function fieldChanged(entry, q) {
  const fieldEl = $(`[data-testid="field"][data-question-id="${CSS.escape(q.id)}"]`, entry.el);
  if (!fieldEl?.classList.contains('invalid') || fieldAnswer(q, readField(fieldEl, q)).error) return;
  fieldEl.classList.remove('invalid');
  if (entry.ui.invalidField === q.id) {
    entry.ui.invalidField = null;
    clearError(entry);
  }
}

/** A number key on a selected form card: the focus goes to that field (1 is the first). */
export function focusField(entry, index) {
  const field = entry.el.querySelectorAll('[data-testid="field"]')[index];
  if (!field) return;
  const target = $('input:checked, input, select', field);
  target?.focus({ preventScroll: true });
  field.scrollIntoView({ block: 'nearest' });
}
