// The steps layout: one question at a time, options as buttons, Back and a stepper.
import { $, autosize, h, nextId } from './dom.js';
import { answersFromDrafts, isMulti, pickOption, replyToQuestion, setSeveral, answerable } from './card-draft.js';
import { clearError, showError, submit } from './card-actions.js';
import { approvalText } from './format.js';
import { withInlineMarkdown, withMarkdown } from './markdown-view.js';
import { actions } from './store.js';

export function renderStep(entry) {
  const { card, ui, parts } = entry;
  const n = card.questions.length;
  const q = card.questions[ui.step];
  const draft = ui.drafts[q.id];
  const multi = isMulti(q, draft);
  const last = ui.step === n - 1;
  const textId = nextId('q');

  const options = q.options.map((option, i) => {
    const picked = draft.selected.has(option.label);
    return h('button', {
      type: 'button',
      class: `option${multi ? ' multi' : ''}${picked ? ' picked' : ''}`,
      dataset: { testid: 'option', label: option.label },
      'aria-pressed': multi ? String(picked) : undefined,
      onclick: () => pick(entry, i),
    },
      h('span', { class: 'key', 'aria-hidden': 'true' }, String(i + 1)),
      h('span', { class: 'option-main' },
        h('span', { class: 'option-label' }, option.label),
        option.description ? withInlineMarkdown(h('span', { class: 'option-desc' }), option.description) : null,
      ),
      multi ? h('span', { class: 'check', 'aria-hidden': 'true' }) : null,
    );
  });

  const toggle =
    card.selectSeveral && !q.multiSelect && q.options.length >= 2
      ? h('label', { class: 'toggle' },
          h('input', {
            type: 'checkbox',
            role: 'switch',
            checked: draft.several,
            dataset: { testid: 'select-several' },
            onchange: (e) => {
              setSeveral(draft, e.target.checked);
              renderStep(entry);
              $('[data-testid="select-several"]', entry.el)?.focus();
            },
          }),
          h('span', { class: 'toggle-track', 'aria-hidden': 'true' }),
          'Select several',
        )
      : null;

  let text = null;
  if (q.freeText) {
    text = h('textarea', {
      class: 'free-text',
      rows: '1',
      dataset: { testid: 'free-text' },
      'aria-label': q.options.length ? 'Your own answer' : 'Your answer',
      placeholder: q.options.length ? (multi ? 'Anything to add? (optional)' : 'Or type your own answer…') : 'Type your answer…',
      maxlength: '20000',
      value: draft.text,
      oninput: (e) => {
        draft.text = e.target.value;
        autosize(e.target);
        if (draft.text.trim() && entry.ui.replyError) {
          entry.ui.replyError = false;
          clearError(entry);
        }
      },
      onkeydown: (e) => {
        if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
          e.preventDefault();
          reply(entry);
        }
      },
    });
  }
  const replyLabel = !last ? 'Next' : multi ? 'Reply with selection' : 'Send';
  const replyButton = multi || q.freeText
    ? h('button', {
        type: 'button',
        // With options to click, a typed reply is the side road: a quieter button.
        class: `${multi || !q.options.length ? 'primary' : 'secondary'} reply`,
        dataset: { testid: 'reply' },
        onclick: () => reply(entry),
      }, replyLabel)
    : null;

  const question = h('div', { class: 'question', dataset: { testid: 'question', questionId: q.id } },
    q.header ? h('span', { class: 'chip chip-header', dataset: { testid: 'question-header' } }, q.header) : null,
    questionText(card, q.text, textId),
    multi ? h('p', { class: 'muted small hint-line' }, 'Check every option that applies.') : null,
    toggle,
    options.length ? h('div', { class: 'options', role: 'group', 'aria-labelledby': textId }, options) : null,
    text || replyButton ? h('div', { class: `reply-row${text ? '' : ' solo'}` }, text, replyButton) : null,
  );
  parts.body.replaceChildren(question);
  if (text) requestAnimationFrame(() => autosize(text));

  parts.back.hidden = ui.step === 0;
  parts.stepper.hidden = n < 2;
  if (n > 1) {
    parts.stepper.setAttribute('aria-label', `Question ${ui.step + 1} of ${n}`);
    parts.stepper.replaceChildren(
      h('span', { class: 'dots', 'aria-hidden': 'true' },
        card.questions.map((qq, i) => h('span', { class: `dot${i < ui.step ? ' done' : ''}${i === ui.step ? ' current' : ''}` }))),
      h('span', { class: 'step-count' }, `${ui.step + 1} / ${n}`),
    );
  }
}

/** An approval's command, diff or plan keeps every line and space as sent (format.js). */
function questionText(card, text, id) {
  const verbatim = approvalText(card, text);
  if (!verbatim) return collapsible(withMarkdown(h('div', { class: 'question-text clamped', id, dataset: { testid: 'question-text' } }), text));
  const { lead, code } = verbatim;
  return h('div', { class: 'question-text approval-text', id },
    lead ? h('p', { class: 'approval-lead' }, lead) : null,
    code ? h('pre', { class: 'approval-code', tabindex: '0', dataset: { testid: 'approval-code' } }, code) : null,
  );
}

/**
 * A question longer than a few lines shows its first lines and "Show all" (style.css sets
 * how many: fewer on a phone). Measured whenever its size changes, as the page is laid out
 * only once the card is on a visible view.
 */
function collapsible(textEl) {
  const more = h('button', { type: 'button', class: 'link-button show-all', dataset: { testid: 'show-all' }, hidden: true, 'aria-expanded': 'false' }, 'Show all');
  more.addEventListener('click', () => {
    const open = textEl.classList.toggle('clamped') === false;
    more.setAttribute('aria-expanded', String(open));
    more.textContent = open ? 'Show less' : 'Show all';
  });
  const measure = () => {
    if (!textEl.classList.contains('clamped')) return;
    const cut = textEl.scrollHeight > textEl.clientHeight + 1;
    textEl.classList.toggle('overflowing', cut);
    more.hidden = !cut;
  };
  new ResizeObserver(measure).observe(textEl);
  return [textEl, more];
}

export function pick(entry, index) {
  const { card, ui } = entry;
  if (!answerable(entry) || ui.busy) return;
  const q = card.questions[ui.step];
  const option = q.options[index];
  if (!option) return;
  const draft = ui.drafts[q.id];
  clearError(entry);
  if (pickOption(q, draft, option.label) === 'chosen') {
    advance(entry);
    return;
  }
  const button = entry.parts.body.querySelectorAll('[data-testid="option"]')[index];
  const picked = draft.selected.has(option.label);
  button.classList.toggle('picked', picked);
  button.setAttribute('aria-pressed', String(picked));
}

function reply(entry) {
  const { card, ui } = entry;
  if (!answerable(entry) || ui.busy) return;
  const q = card.questions[ui.step];
  const error = replyToQuestion(q, ui.drafts[q.id]);
  if (error) {
    showError(entry, error);
    ui.replyError = true; // cleared as soon as something is typed
  } else advance(entry);
}

function advance(entry) {
  const { card, ui } = entry;
  if (ui.step < card.questions.length - 1) {
    const hadFocus = entry.el.contains(document.activeElement);
    goToStep(entry, ui.step + 1);
    if (hadFocus) focusFirst(entry);
    return;
  }
  submit(entry, answersFromDrafts(card, ui.drafts));
}

export function goToStep(entry, step) {
  if (step < 0 || step >= entry.card.questions.length) return;
  entry.ui.step = step;
  clearError(entry);
  renderStep(entry);
  actions.markKeyboardTarget();
}

function focusFirst(entry) {
  const target = $('[data-testid="option"], [data-testid="free-text"]', entry.parts.body);
  (target ?? entry.el).focus({ preventScroll: true });
}
