// Sending a card's answer or skip: held for the undo window first (undo.js), then sent; kept
// in the outbox (outbox.js) until the relay has it, so an outage or a reload loses nothing;
// what the card shows meanwhile (queued, failed with Retry) and after a refusal.
import { Unauthorized, api } from './api.js';
import { h, setDisabled, setText } from './dom.js';
import { answerable, stepNamedIn } from './card-draft.js';
import { asAnswered, closedByText, describeAnswer } from './format.js';
import { keep, newKey, outbox, take } from './outbox.js';
import { holdMs, undoSeconds } from './undo.js';
import { actions, store } from './store.js';

const cardPath = (cardId, action) => `/api/cards/${encodeURIComponent(cardId)}/${action}`;

/** One try of an outbox item; the same key every time. */
const send = (item, keepalive) =>
  api(cardPath(item.cardId, item.action), { method: 'POST', json: item.json, keepalive, headers: { 'idempotency-key': item.key } });

export function submit(entry, answers) {
  const late = entry.card.status !== 'pending' && entry.ui.late;
  const label = `Answered${late ? ' late' : ''}: ${describeAnswer({ ...entry.card, answer: answers })}`;
  return hold(entry, { cardId: entry.card.id, action: 'answer', json: late ? { answers, late } : { answers }, key: newKey(), label });
}

export function skipCard(entry) {
  if (entry.card.status !== 'pending' || entry.ui.busy) return;
  return hold(entry, { cardId: entry.card.id, action: 'skip', key: newKey(), label: 'Skipped' });
}

/** Shows "Answered: SQLite · Undo" for the window, then sends; a window of 0 sends at once. */
function hold(entry, item) {
  keep(item);
  const ms = holdMs(undoSeconds(), entry.card.expiresAt, Date.now());
  if (ms === 0) return deliver(entry, item);
  const hadFocus = entry.el.contains(document.activeElement);
  // Held, not busy: the card stays bright, every control but Undo is off.
  entry.ui.busy = true;
  setDisabled(entry.el, true);
  entry.ui.held = { item, timer: setTimeout(() => release(entry), ms) };
  store.held.add(entry);
  const { undo } = entry.parts;
  setText(undo.text, item.label);
  undo.bar.hidden = false;
  delete undo.bar.dataset.queued;
  undo.button.hidden = false;
  undo.button.disabled = false;
  entry.el.dataset.held = 'true';
  if (hadFocus) undo.button.focus({ preventScroll: true });
}

function takeHeld(entry) {
  const held = entry.ui.held;
  if (!held) return null;
  clearTimeout(held.timer);
  entry.ui.held = null;
  store.held.delete(entry);
  entry.parts.undo.bar.hidden = true;
  delete entry.el.dataset.held;
  return held;
}

function release(entry) {
  const held = takeHeld(entry);
  if (held) deliver(entry, held.item);
}

/** Undo: the card is back as it was, and nothing was sent. */
export function undo(entry) {
  const hadFocus = entry.el.contains(document.activeElement);
  if (!takeHeld(entry)) return;
  take(entry.card.id);
  setBusy(entry, false);
  actions.cardReopened(entry);
  if (hadFocus) entry.el.focus({ preventScroll: true });
}

/** The card closed meanwhile (answered elsewhere, expired): what was held or queued is dropped. */
export function dropHeld(entry) {
  takeHeld(entry);
  if (!entry.ui.late) take(entry.card.id);
}

/**
 * The page is going away (closed, reloaded, signed out): send what is held now. Resolves
 * once every request is answered (sign-out waits for it; a closing tab cannot, and its
 * outbox sends again, with the same keys, when the page is back).
 */
export function flushHeld() {
  const sends = [...store.held].map((entry) => {
    const held = takeHeld(entry);
    return held && send(held.item, true).then((card) => (take(held.item.cardId), actions.upsert(card)), () => {});
  });
  return Promise.all(sends);
}

/** The relay is reachable again (or the page just loaded): what waits in the outbox goes, once. */
export function sendQueued() {
  for (const item of outbox()) {
    const entry = store.shown.get(item.cardId);
    if (entry?.ui.held || entry?.ui.busy) continue; // in its undo window, or on its way
    if (entry) deliver(entry, item);
    else send(item, false).then((card) => (take(item.cardId), actions.upsert(card)), (err) => err.status !== 0 && take(item.cardId));
  }
}

async function deliver(entry, item) {
  setBusy(entry, true);
  showQueued(entry, null);
  try {
    const card = await send(item, false);
    take(item.cardId);
    actions.upsert(card);
  } catch (err) {
    // Unreachable: kept, and sent once the relay is back. Anything else is the relay's word on it.
    if (err.status === 0) showQueued(entry, item);
    else {
      take(item.cardId);
      failed(entry, err, item);
    }
  } finally {
    setBusy(entry, false);
    if (entry.ui.queued) setDisabled(entry.el, true);
  }
}

/** "Queued: SQLite · sent once the relay is back", or (null) not queued. */
function showQueued(entry, item) {
  entry.ui.queued = item;
  entry.el.dataset.delivery = item ? 'queued' : '';
  const { undo } = entry.parts;
  if (!item) {
    if (!entry.ui.held) undo.bar.hidden = true;
    return;
  }
  setText(undo.text, `Queued: ${item.label.replace(/^Answered(?: late)?: /, '')}, sent once the relay is back`);
  undo.bar.dataset.queued = 'true';
  undo.button.hidden = true;
  undo.bar.hidden = false;
  clearError(entry);
}

function failed(entry, err, item) {
  if (err instanceof Unauthorized) return;
  if (err.card) actions.upsert(err.card); // 409 / 410 carry the card as it now stands
  // Another surface answered first: the card shows that answer and who gave it; no error.
  if (err.code === 'already_answered' && err.card) {
    const answer = asAnswered(err.card);
    setText(entry.parts.status, `Answered first elsewhere: ${describeAnswer(answer)} (${closedByText(answer)})`);
    entry.parts.status.hidden = false;
    return;
  }
  // The relay could not take it just now (busy, its database away): Retry sends the very same answer.
  const retryable = err.status === 429 || err.status >= 500;
  showError(entry, err.message, retryable ? () => deliver(entry, item) : null);
  if (retryable) {
    keep(item);
    entry.el.dataset.delivery = 'failed';
  }
  // Point a steps card back at the question the relay complained about.
  if (answerable(entry) && entry.card.layout !== 'form') {
    const step = stepNamedIn(entry.card, err.message);
    if (step >= 0 && step !== entry.ui.step) {
      actions.goToStep(entry, step);
      showError(entry, err.message);
    }
  }
}

function setBusy(entry, busy) {
  entry.ui.busy = busy;
  entry.el.classList.toggle('busy', busy);
  entry.el.setAttribute('aria-busy', String(busy));
  if (answerable(entry)) setDisabled(entry.el, busy);
}

/** The error under the card; with `retry`, a Retry button after it. */
export function showError(entry, message, retry = null) {
  setText(entry.parts.error, message);
  if (retry) {
    entry.parts.error.append(' ', h('button', { type: 'button', class: 'link-button retry', dataset: { testid: 'retry' }, onclick: () => (clearError(entry), retry()) }, 'Retry'));
  }
  entry.parts.error.hidden = false;
}

export function clearError(entry) {
  entry.parts.error.hidden = true;
  setText(entry.parts.error, '');
  if (entry.el?.dataset.delivery === 'failed') entry.el.dataset.delivery = '';
}
