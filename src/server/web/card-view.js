// One card's frame: chips, countdown, title, body (steps or form), error, status, Skip.
import { api } from './api.js';
import { h, nextId, setDisabled, setText } from './dom.js';
import { newUi } from './card-draft.js';
import { fillForm, formDraft, renderForm } from './card-form.js';
import { draftOfUi, loadDraft, restoreUi, saveDraft } from './drafts.js';
import { goToStep, renderStep } from './card-steps.js';
import { skipCard, undo } from './card-actions.js';
import { answeredBy, fmtLeft, fmtTime, routeText, shortId } from './format.js';
import { providerLabel, providerTitle } from './new-session.js';
import { withInlineMarkdown } from './markdown-view.js';
import { actions } from './store.js';

/** A heading is one line: a title (or, untitled, the question) with its line breaks as spaces. */
const oneLineOf = (text) => text.replace(/\s*\n\s*/g, ' ');

export function renderCard(entry) {
  const { card } = entry;
  const titleId = nextId('card-title');
  const chips = h('div', { class: 'chips' },
    h('span', { class: 'chip chip-provider', title: card.provider ? providerTitle(card.provider, card.engine) : undefined, dataset: { testid: 'provider' } }, providerLabel(card.provider, card.engine)),
    card.kind === 'approval' ? h('span', { class: 'chip chip-approval' }, 'Approval') : null,
    card.sessionId
      ? h('a', {
          class: 'chip chip-session',
          href: `#sessions/${encodeURIComponent(card.sessionId)}`,
          title: `Asked by session ${card.sessionId}: open its transcript`,
          dataset: { testid: 'card-session', sessionId: card.sessionId },
        }, `session ${shortId(card.sessionId)}`)
      : null,
  );
  const countdown = h('span', { class: 'countdown', dataset: { testid: 'countdown' }, title: `Asked ${fmtTime(card.createdAt)} · closes ${fmtTime(card.expiresAt)}` });
  entry.ui.countdown = countdown;
  const body = h('div', { class: 'card-body' });
  const error = h('p', { class: 'error card-error', dataset: { testid: 'card-error' }, role: 'alert', hidden: true });
  const status = h('p', { class: 'card-status', dataset: { testid: 'card-status' }, role: 'status', hidden: true });
  const closedBy = h('p', { class: 'closed-by', dataset: { testid: 'closed-by' }, hidden: true });
  const delivery = h('p', { class: 'delivery', dataset: { testid: 'delivery' }, role: 'status', hidden: true });
  const answerLate = h('button', { type: 'button', class: 'link-button answer-late', dataset: { testid: 'answer-late' }, hidden: true, onclick: () => answerAnyway(entry) }, 'Answer anyway');
  const skip = h('button', { type: 'button', class: 'ghost skip', dataset: { testid: 'skip' }, onclick: () => skipCard(entry) }, 'Skip');
  const stepper = h('div', { class: 'stepper', dataset: { testid: 'stepper' }, hidden: true });
  const back = h('button', { type: 'button', class: 'ghost back', dataset: { testid: 'back' }, hidden: true, onclick: () => goToStep(entry, entry.ui.step - 1) }, '← Back');
  const undoText = h('span', { class: 'undo-text', dataset: { testid: 'undo-text' } });
  const undoButton = h('button', { type: 'button', class: 'link-button undo', dataset: { testid: 'undo' }, onclick: () => undo(entry) }, 'Undo');
  const undoBar = h('p', { class: 'undo-bar', dataset: { testid: 'undo-bar' }, role: 'status', hidden: true }, undoText, h('span', { 'aria-hidden': 'true' }, ' · '), undoButton);

  const el = h('article', {
    class: `card${card.kind === 'approval' ? ' card-approval' : ''}`,
    tabindex: '-1',
    'aria-labelledby': titleId,
    dataset: { testid: 'card', cardId: card.id, status: card.status, layout: card.layout },
  },
    h('div', { class: 'card-head' }, chips, countdown),
    // Without a title the heading shows only in the compact Recent list (the question says it all).
    withInlineMarkdown(h('h3', { class: `card-title${card.title ? '' : ' untitled'}`, id: titleId }), oneLineOf(card.title || card.questions[0]?.text || 'Question')),
    body,
    error,
    undoBar,
    status,
    closedBy,
    delivery,
    answerLate,
    h('div', { class: 'card-foot' }, h('div', { class: 'foot-left' }, back, stepper), skip),
  );
  entry.parts = { body, error, status, closedBy, delivery, answerLate, skip, stepper, back, chips, agentBadge: null, routeChip: null, undo: { bar: undoBar, text: undoText, button: undoButton } };
  showRoute(entry);
  tickCountdown(entry, Date.now());
  // A half-typed answer from before (another card shown meanwhile, a reload) comes back.
  const saved = card.status === 'pending' ? loadDraft(card.id) : null;
  if (card.layout === 'form') {
    renderForm(entry);
    fillForm(entry, saved);
  } else {
    restoreUi(entry.ui, card, saved);
    renderStep(entry);
  }
  for (const type of ['input', 'change', 'click']) el.addEventListener(type, () => keepDraft(entry));
  return el;
}

/** After every pick, keystroke and step: the card's draft, kept in this browser while it is open. */
function keepDraft(entry) {
  if (entry.card.status !== 'pending' || entry.ui.held) return;
  saveDraft(entry.card.id, entry.card.layout === 'form' ? formDraft(entry) : draftOfUi(entry.ui));
}

/**
 * Answer anyway: an expired or cancelled card opens again on the page, from its first
 * question, and its answer goes to the relay as a late answer (docs/api.md, "Late answers").
 */
export function answerAnyway(entry) {
  const { el, parts } = entry;
  entry.ui = { ...newUi(entry.card), countdown: entry.ui.countdown, late: true };
  el.classList.remove('closed', 'compact');
  el.dataset.late = 'true';
  parts.answerLate.hidden = true;
  parts.skip.hidden = true;
  setText(parts.status, 'Answering late: the agent went on without an answer, and gets this one when it can.');
  parts.body.replaceChildren();
  if (entry.card.layout === 'form') renderForm(entry);
  else renderStep(entry);
  setDisabled(el, false);
  el.focus({ preventScroll: true });
}

/** Undo: a steps card shows its last question again, with what was picked or typed. */
export function reopenCard(entry) {
  if (entry.card.status !== 'pending') return;
  if (entry.card.layout !== 'form') {
    entry.ui.drafts[entry.card.questions[entry.ui.step].id].done = false;
    renderStep(entry);
  }
}

/** Who a routed card goes to, after its provider and session chips; it grows as the card escalates. */
export function showRoute(entry) {
  const { card, parts } = entry;
  const route = routeText(card);
  parts.routeChip?.remove();
  parts.routeChip = route
    ? h('span', { class: `chip chip-route${card.restricted ? ' restricted' : ''}`, title: route.title, dataset: { testid: 'routed-to', route: card.route } }, route.label)
    : null;
  if (parts.routeChip) parts.chips.insertBefore(parts.routeChip, parts.agentBadge);
}

/** An answer (or skip) not given by you here: a badge next to the card's chips (format.js answeredBy). */
export function showAnsweredBy(entry) {
  const { card, el, parts } = entry;
  const closed = card.status === 'answered' || card.status === 'skipped';
  el.dataset.answeredBy = closed && card.answeredBy ? card.answeredBy.kind : '';
  parts.agentBadge?.remove();
  parts.agentBadge = null;
  const by = answeredBy(card);
  if (!by) return;
  if (by.kind === 'route') {
    parts.agentBadge = h('span', { class: 'chip chip-channel', title: by.title, dataset: { testid: 'answered-by-route', route: by.route } }, by.label);
  } else if (by.kind === 'channel') {
    parts.agentBadge = h('span', { class: 'chip chip-channel', title: by.title, dataset: { testid: 'answered-in-channel', surface: by.surface, user: by.user } }, by.label);
  } else {
    const dataset = { testid: 'answered-by-agent', agentId: by.agentId, surface: by.surface };
    parts.agentBadge = by.session
      ? h('a', { class: 'chip chip-agent', href: `#sessions/${encodeURIComponent(by.agentId)}`, title: `${by.title}: open its transcript`, dataset }, by.label)
      : h('span', { class: 'chip chip-agent', title: by.title, dataset }, by.label);
  }
  parts.chips.append(parts.agentBadge);
}

export function markChosen(entry) {
  const answer = entry.card.answer ?? entry.card.lateAnswer?.answer ?? {};
  for (const button of entry.el.querySelectorAll('[data-testid="option"]')) {
    const qid = button.closest('[data-question-id]')?.dataset.questionId;
    button.classList.toggle('chosen', Boolean(answer[qid]?.selected.includes(button.dataset.label)));
  }
}

export function tickCountdown(entry, now) {
  const left = Date.parse(entry.card.expiresAt) - now;
  const el = entry.ui.countdown;
  setText(el, fmtLeft(left));
  el.classList.toggle('soon', left < 60_000);
  // The relay's own timer closes the card and tells us; asking once also makes it look.
  if (left <= -500 && !entry.ui.probed) {
    entry.ui.probed = true;
    api(`/api/cards/${encodeURIComponent(entry.card.id)}`).then(actions.upsert, () => {});
  }
}
