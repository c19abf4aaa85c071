// The views and the address: #cards (the default), #card=<id>, #sessions, #sessions/<id>.
import { api } from './api.js';
import { els } from './dom.js';
import { markKeyboardTarget, showClosedCard, upsert } from './board.js';
import { closeSessionView, openSessionView } from './session-view.js';
import { parseRoute } from './format.js';
import { store } from './store.js';

export function route() {
  if (!store.signedIn) return;
  const { view, linkedCard, sessionId } = parseRoute(location.hash.slice(1));
  els.board.hidden = view !== 'cards';
  els.sessions.hidden = view !== 'sessions';
  for (const tab of els.tabs.querySelectorAll('.tab')) {
    const current = tab.dataset.view === view;
    tab.classList.toggle('current', current);
    if (current) tab.setAttribute('aria-current', 'page');
    else tab.removeAttribute('aria-current');
  }
  if (sessionId) openSessionView(sessionId);
  else closeSessionView();
  const key = `${view}/${sessionId ?? ''}`;
  if (store.lastRoute !== null && key !== store.lastRoute) window.scrollTo(0, 0);
  store.lastRoute = key;
  markKeyboardTarget();
  store.awaitedCard = null;
  for (const { el } of store.shown.values()) if (el.dataset.cardId !== linkedCard) el.classList.remove('linked');
  if (linkedCard) revealCard(linkedCard, { navigate: false });
}

/** Goes somewhere on the page now (a hash link would get there one task later). */
export function navigate(hash) {
  if (location.hash !== hash) history.pushState(null, '', hash);
  route();
}

/**
 * Shows a card on the Cards view, fetching it when the page never saw it (e.g. closed long
 * ago). `navigate: false` keeps the address as it is (#card=<id>, the deep link).
 */
export async function revealCard(id, { navigate: go = true } = {}) {
  let entry = store.shown.get(id);
  if (!entry) {
    if (!go) store.awaitedCard = id;
    let card;
    try {
      card = await api(`/api/cards/${encodeURIComponent(id)}`);
    } catch {
      return; // unknown so far: upsert() reveals it if it turns up while the link is open
    }
    if (!go && store.awaitedCard !== id) return; // the address changed meanwhile
    store.awaitedCard = null;
    if (card.status === 'pending') upsert(card);
    else if (!store.shown.has(card.id)) showClosedCard(card);
    entry = store.shown.get(id);
    if (!entry) return;
  }
  if (go) navigate('#cards');
  else if (els.board.hidden) return; // the user went elsewhere meanwhile
  else entry.el.classList.add('linked'); // stays marked while the address names it
  entry.el.scrollIntoView({ block: 'center' });
  entry.el.focus({ preventScroll: true });
  entry.el.classList.remove('flash');
  void entry.el.offsetWidth; // restart the highlight
  entry.el.classList.add('flash');
}

export function initRouter() {
  window.addEventListener('hashchange', route);
  window.addEventListener('popstate', route);
}
