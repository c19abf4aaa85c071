// Sending a card's answer or skip: held for the undo window first (undo.js), then sent; what
// the card shows meanwhile and after a refusal.
import { Unauthorized, api } from './api.js';
import { setDisabled, setText } from './dom.js';
import { answerable, stepNamedIn } from './card-draft.js';
import { closedByText, describeAnswer } from './format.js';
import { holdMs, undoSeconds } from './undo.js';
import { actions, store } from './store.js';

const cardPath = (entry, action) => `/api/cards/${encodeURIComponent(entry.card.id)}/${action}`;

export function submit(entry, answers) {
  const late = entry.card.status !== 'pending' && entry.ui.late;
  const label = `Answered${late ? ' late' : ''}: ${describeAnswer({ ...entry.card, answer: answers })}`;
  const json = late ? { answers, late } : { answers };
  return hold(entry, label, (keepalive) => api(cardPath(entry, 'answer'), { method: 'POST', json, keepalive }));
}

export function skipCard(entry) {
  if (entry.card.status !== 'pending' || entry.ui.busy) return;
  return hold(entry, 'Skipped', (keepalive) => api(cardPath(entry, 'skip'), { method: 'POST', keepalive }));
}

/** Shows "Answered: SQLite · Undo" for the window, then sends; a window of 0 sends at once. */
function hold(entry, label, send) {
  const ms = holdMs(undoSeconds(), entry.card.expiresAt, Date.now());
  if (ms === 0) return deliver(entry, send);
  const hadFocus = entry.el.contains(document.activeElement);
  // Held, not busy: the card stays bright, every control but Undo is off.
  entry.ui.busy = true;
  setDisabled(entry.el, true);
  entry.ui.held = { send, timer: setTimeout(() => release(entry), ms) };
  store.held.add(entry);
  const { undo } = entry.parts;
  setText(undo.text, label);
  undo.bar.hidden = false;
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
  if (held) deliver(entry, held.send);
}

/** Undo: the card is back as it was, and nothing was sent. */
export function undo(entry) {
  const hadFocus = entry.el.contains(document.activeElement);
  if (!takeHeld(entry)) return;
  setBusy(entry, false);
  actions.cardReopened(entry);
  if (hadFocus) entry.el.focus({ preventScroll: true });
}

/** The card closed meanwhile (answered elsewhere, expired): what was held is dropped. */
export function dropHeld(entry) {
  takeHeld(entry);
}

/**
 * The page is going away (closed, reloaded, signed out): send what is held now. Resolves
 * once every request is answered (sign-out waits for it; a closing tab cannot).
 */
export function flushHeld() {
  const sends = [...store.held].map((entry) => takeHeld(entry)?.send(true).then(actions.upsert, () => {}));
  return Promise.all(sends);
}

async function deliver(entry, send) {
  setBusy(entry, true);
  try {
    actions.upsert(await send(false));
  } catch (err) {
    failed(entry, err);
  } finally {
    setBusy(entry, false);
  }
}

function failed(entry, err) {
  if (err instanceof Unauthorized) return;
  if (err.card) actions.upsert(err.card); // 409 / 410 carry the card as it now stands
  // Another surface answered first: the card shows that answer and who gave it; no error.
  if (err.code === 'already_answered' && err.card) {
    const winner = err.card;
    const answer = winner.lateAnswer && winner.status !== 'answered' ? { ...winner, status: 'answered', answer: winner.lateAnswer.answer, answeredBy: winner.lateAnswer.answeredBy } : winner;
    setText(entry.parts.status, `Answered first elsewhere: ${describeAnswer(answer)} (${closedByText(answer)})`);
    entry.parts.status.hidden = false;
    return;
  }
  showError(entry, err.message);
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

export function showError(entry, message) {
  setText(entry.parts.error, message);
  entry.parts.error.hidden = false;
}

export function clearError(entry) {
  entry.parts.error.hidden = true;
  setText(entry.parts.error, '');
}
