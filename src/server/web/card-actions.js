// Sending a card's answer or skip, and what the card shows meanwhile and after a refusal.
import { Unauthorized, api } from './api.js';
import { setDisabled, setText } from './dom.js';
import { stepNamedIn } from './card-draft.js';
import { actions } from './store.js';

export async function submit(entry, answers) {
  setBusy(entry, true);
  try {
    const card = await api(`/api/cards/${encodeURIComponent(entry.card.id)}/answer`, { method: 'POST', json: { answers } });
    actions.upsert(card);
  } catch (err) {
    failed(entry, err);
  } finally {
    setBusy(entry, false);
  }
}

export async function skipCard(entry) {
  if (entry.card.status !== 'pending' || entry.ui.busy) return;
  setBusy(entry, true);
  try {
    actions.upsert(await api(`/api/cards/${encodeURIComponent(entry.card.id)}/skip`, { method: 'POST' }));
  } catch (err) {
    failed(entry, err);
  } finally {
    setBusy(entry, false);
  }
}

function failed(entry, err) {
  if (err instanceof Unauthorized) return;
  if (err.card) actions.upsert(err.card); // 409 / 410 carry the card as it now stands
  let message = err.message;
  if (err.code === 'already_answered') message = `Someone else answered first. ${message}`;
  showError(entry, message);
  // Point a steps card back at the question the relay complained about.
  if (entry.card.status === 'pending' && entry.card.layout !== 'form') {
    const step = stepNamedIn(entry.card, err.message);
    if (step >= 0 && step !== entry.ui.step) {
      actions.goToStep(entry, step);
      showError(entry, message);
    }
  }
}

function setBusy(entry, busy) {
  entry.ui.busy = busy;
  entry.el.classList.toggle('busy', busy);
  entry.el.setAttribute('aria-busy', String(busy));
  if (entry.card.status === 'pending') setDisabled(entry.el, busy);
}

export function showError(entry, message) {
  setText(entry.parts.error, message);
  entry.parts.error.hidden = false;
}

export function clearError(entry) {
  entry.parts.error.hidden = true;
  setText(entry.parts.error, '');
}
