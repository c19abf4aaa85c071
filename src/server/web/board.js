// The Cards view: pending cards oldest first, closed ones settling into Recent, the number
// keys, and the list that catches up with what happened while the page was not listening.
import { Unauthorized, api, setConn } from './api.js';
import { els, setDisabled, setText } from './dom.js';
import { newUi } from './card-draft.js';
import { focusField } from './card-form.js';
import { pick } from './card-steps.js';
import { dropHeld } from './card-actions.js';
import { UNDO_CHOICES, setUndoSeconds, undoSeconds } from './undo.js';
import { markChosen, renderCard, showAnsweredBy, showRoute, tickCountdown } from './card-view.js';
import { closedByText, deliveryText, describeClosed } from './format.js';
import { dropDraft, dropDraftsExcept } from './drafts.js';
import { actions, store } from './store.js';

const RECENT_AFTER_MS = 6000; // a closed card stays in place this long, then moves to Recent
const RECENT_MAX = 20;

export function upsert(card) {
  if (!card || typeof card.id !== 'string') return;
  const known = store.shown.get(card.id);
  if (!known) {
    if (card.status !== 'pending') return; // closed before we ever saw it
    const entry = { card, el: null, ui: newUi(card) };
    entry.el = renderCard(entry);
    store.shown.set(card.id, entry);
    insertPending(entry);
    refreshBoard();
    if (store.awaitedCard === card.id) {
      store.awaitedCard = null;
      actions.revealCard(card.id, { navigate: false });
    }
    return;
  }
  if (card.status === 'pending') {
    known.card = card;
    showRoute(known); // escalated: it goes to more people now
    return;
  }
  const wasOpen = known.card.status === 'pending' || known.ui.late;
  if (!wasOpen && olderThan(card, known.card)) return; // an answer's response that arrives after its delivery's event
  known.card = card;
  // Closed is final; what changes after is its late answer and where the answer got to.
  if (wasOpen) closeCard(known);
  else showDelivery(known);
}

/** Loads the pending list and settles cards that closed while we were not listening. */
export async function reload() {
  let list;
  try {
    // Every pending card, up to the API's ceiling (its default page is 500).
    list = (await api('/api/cards?status=pending&limit=10000')).cards;
  } catch (err) {
    if (!(err instanceof Unauthorized)) setConn('offline');
    return false;
  }
  const ids = new Set(list.map((c) => c.id));
  dropDraftsExcept(ids);
  for (const card of list) upsert(card);
  const gone = [...store.shown.values()].filter((s) => s.card.status === 'pending' && !ids.has(s.card.id));
  await Promise.all(
    gone.map(async (s) => {
      try {
        upsert(await api(`/api/cards/${encodeURIComponent(s.card.id)}`));
      } catch {
        /* leave it; the next reload tries again */
      }
    }),
  );
  return true;
}

/** Signed out: the cards leave the page. */
export function forgetCards() {
  for (const { el } of store.shown.values()) el.remove();
  store.shown.clear();
  refreshBoard();
}

function insertPending(entry) {
  const after = [...els.pending.children].find((el) => {
    const other = store.shown.get(el.dataset.cardId);
    return other && other.card.createdAt > entry.card.createdAt;
  });
  els.pending.insertBefore(entry.el, after ?? null);
}

export function pendingEntries() {
  return [...els.pending.children].map((el) => store.shown.get(el.dataset.cardId)).filter((s) => s && s.card.status === 'pending');
}

function refreshBoard() {
  const n = pendingEntries().length;
  setText(els.count, String(n));
  setText(els.tabCardsCount, n > 0 ? String(n) : '');
  // Not above a card that is still closing in place (it moves to Recent a moment later).
  els.empty.hidden = n > 0 || els.pending.children.length > 0;
  document.title = n > 0 ? `(${n}) askrelay` : 'askrelay';
  els.recent.hidden = els.recentList.children.length === 0;
  els.recentLink.hidden = els.recent.hidden;
  setText(els.recentLink, `Recent (${els.recentList.children.length}) ↓`);
  markKeyboardTarget();
}

function closeCard(entry, { settle = true } = {}) {
  const { card, el, parts } = entry;
  dropHeld(entry);
  const wasLate = entry.ui.late;
  entry.ui.late = false;
  dropDraft(card.id);
  el.dataset.status = card.status;
  el.classList.add('closed');
  if (wasLate) el.classList.add('compact');
  setDisabled(el, true);
  parts.back.hidden = true;
  entry.ui.countdown.hidden = true;
  setText(parts.status, describeClosed(card));
  parts.status.hidden = false;
  setText(parts.closedBy, closedByText(card));
  parts.closedBy.hidden = false;
  showAnsweredBy(entry);
  showDelivery(entry);
  if (store.activeId === card.id) store.activeId = null;
  refreshBoard();
  if (settle && !wasLate) setTimeout(() => moveToRecent(entry), RECENT_AFTER_MS);
}

const DELIVERY_RANK = { sent: 1, undelivered: 2, delivered: 3 };
const rank = (card) => (card.lateAnswer ? 10 : 0) + (DELIVERY_RANK[card.delivery?.state] ?? 0);

/** A closed card only moves on (a late answer, then sent → undelivered → delivered): an older copy is stale. */
function olderThan(card, known) {
  return rank(card) < rank(known);
}

/** A closed card's delivery line, its late answer, and Answer anyway while it has none. */
function showDelivery(entry) {
  const { card, el, parts } = entry;
  if (entry.ui.late) return; // being answered late: the line comes with the answer
  setText(parts.delivery, deliveryText(card));
  parts.delivery.hidden = !card.delivery;
  el.dataset.delivery = card.delivery?.state ?? '';
  parts.answerLate.hidden = !((card.status === 'expired' || card.status === 'cancelled') && !card.lateAnswer);
  parts.answerLate.disabled = false; // the rest of a closed card is off
  if (card.status === 'answered' || card.lateAnswer) markChosen(entry);
}

function moveToRecent(entry) {
  if (!entry.el.isConnected || entry.el.parentElement === els.recentList) return;
  const hadFocus = entry.el.contains(document.activeElement);
  els.recentList.prepend(entry.el);
  entry.el.classList.add('compact');
  while (els.recentList.children.length > RECENT_MAX) {
    const last = els.recentList.lastElementChild;
    store.shown.delete(last.dataset.cardId);
    last.remove();
  }
  refreshBoard();
  if (hadFocus) pendingEntries()[0]?.el.focus({ preventScroll: true });
}

/** A closed card the page never saw (a deep link to it): straight into Recent. */
export function showClosedCard(card) {
  const entry = { card, el: null, ui: newUi(card) };
  entry.el = renderCard(entry);
  store.shown.set(card.id, entry);
  els.recentList.prepend(entry.el);
  entry.el.classList.add('compact');
  closeCard(entry, { settle: false });
}

// ---------------------------------------------------------------- keyboard

// Number keys answer only the card the human visibly selected (clicked, tabbed to, opened
// from a notification): a stray key with nothing selected must not answer anything.
function keyboardTarget() {
  const active = store.activeId && store.shown.get(store.activeId);
  if (active && active.card.status === 'pending' && active.el.parentElement === els.pending) return active;
  return null;
}

export function markKeyboardTarget() {
  const target = keyboardTarget();
  for (const { el } of store.shown.values()) {
    const selected = el === target?.el;
    el.classList.toggle('kbd-target', selected);
    if (selected) el.setAttribute('aria-current', 'true');
    else el.removeAttribute('aria-current');
  }
}

/** A click or focus on a card selects it; one anywhere else on the page selects none. */
function activate(event) {
  const el = event.target.closest?.('[data-testid="card"]');
  const id = el && store.shown.has(el.dataset.cardId) ? el.dataset.cardId : null;
  if (store.activeId !== id) {
    store.activeId = id;
    markKeyboardTarget();
  }
}

function onKey(event) {
  if (!store.signedIn || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
  if (!/^[1-9]$/.test(event.key) || els.board.hidden) return;
  const t = event.target;
  const typing = t instanceof HTMLElement && (t.isContentEditable || t.matches('textarea, select, input:not([type=checkbox]):not([type=radio])'));
  if (typing) return;
  const entry = keyboardTarget();
  if (!entry) {
    if (pendingEntries().length) nudgeKeyHint();
    return;
  }
  if (entry.ui.busy) return;
  const index = Number(event.key) - 1;
  event.preventDefault();
  if (entry.card.layout === 'form') focusField(entry, index);
  else pick(entry, index);
}

/** A number key with no card selected: the hint says how to select one. */
function nudgeKeyHint() {
  els.keyHint.classList.remove('nudge');
  void els.keyHint.offsetWidth; // restart the highlight
  els.keyHint.classList.add('nudge');
  setText(els.keyHint, 'No card is selected: click a card or Tab to it, then press 1–9.');
}

function initRecentLink() {
  els.recentLink.addEventListener('click', (event) => {
    event.preventDefault(); // no address change: the Cards view stays where it is in the history
    els.recent.scrollIntoView({ block: 'start' });
  });
}

function initUndoSetting() {
  const select = els.undoSeconds;
  select.replaceChildren(...UNDO_CHOICES.map((n) => new Option(n === 0 ? 'Off' : `${n} s`, String(n))));
  select.value = String(undoSeconds());
  select.addEventListener('change', () => setUndoSeconds(Number(select.value)));
}

/** The number keys, the card the user selected, the undo setting, and every pending card's countdown. */
export function initBoard() {
  initUndoSetting();
  initRecentLink();
  document.addEventListener('focusin', activate);
  document.addEventListener('pointerdown', activate);
  document.addEventListener('keydown', onKey);
  setInterval(() => {
    const now = Date.now();
    for (const entry of store.shown.values()) if (entry.card.status === 'pending') tickCountdown(entry, now);
  }, 1000);
}
