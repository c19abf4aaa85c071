// The form layout: every question at once as a field, one Submit.
import { $, h, nextId } from './dom.js';
import { fieldAnswer, fieldType } from './card-draft.js';
import { clearError, showError, submit } from './card-actions.js';

export function renderForm(entry) {
  const { card, parts } = entry;
  const fields = card.questions.map((q) => renderField(q));
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

function renderField(q) {
  const type = fieldType(q);
  const id = nextId('field');
  const head = (labelFor) => [
    q.header ? h('span', { class: 'chip chip-header' }, q.header) : null,
    h(labelFor ? 'label' : 'span', { class: 'field-text', for: labelFor, id: `${id}-label` }, q.text),
  ];
  const wrap = (...children) =>
    h('div', { class: `form-field field-${type}`, dataset: { testid: 'field', questionId: q.id, type } }, children);

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
      q.options.map((o, i) =>
        h('label', { class: 'choice' },
          h('input', { type: many ? 'checkbox' : 'radio', name: `${id}-${q.id}`, value: o.label, dataset: { testid: 'field-option' } }),
          h('span', { class: 'choice-box', 'aria-hidden': 'true' }),
          h('span', { class: 'choice-main' },
            h('span', { class: 'option-label' }, o.label),
            o.description ? h('span', { class: 'option-desc' }, o.description) : null,
          ),
          type !== 'boolean' && i < 9 ? h('span', { class: 'key small-key', 'aria-hidden': 'true' }, String(i + 1)) : null,
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
  if (card.status !== 'pending' || ui.busy) return;
  clearError(entry);
  const answers = {};
  for (const q of card.questions) {
    const fieldEl = $(`[data-testid="field"][data-question-id="${CSS.escape(q.id)}"]`, entry.el);
    const checked = fieldAnswer(q, readField(fieldEl, q));
    fieldEl.classList.remove('invalid');
    if (checked.error) {
      fieldEl.classList.add('invalid');
      showError(entry, checked.error);
      $('input, select', fieldEl)?.focus();
      return;
    }
    answers[q.id] = checked.answer;
  }
  submit(entry, answers);
}

/** A number key on a form card: the option of the focused field, else of the first field with options. */
export function pickInForm(entry, index, focused) {
  const fields = [...entry.el.querySelectorAll('[data-testid="field"]')];
  const within = focused instanceof Element ? focused.closest('[data-testid="field"]') : null;
  const field = (within && fields.includes(within) ? within : null) ?? fields.find((f) => f.querySelector('[data-testid="field-option"], select'));
  if (!field) return;
  const select = $('select', field);
  if (select) {
    if (index + 1 < select.options.length) select.selectedIndex = index + 1;
    return;
  }
  const input = field.querySelectorAll('[data-testid="field-option"]')[index];
  if (!input) return;
  input.checked = input.type === 'checkbox' ? !input.checked : true;
  input.focus({ preventScroll: true });
}
