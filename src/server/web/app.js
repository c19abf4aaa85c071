// askrelay's web page: every pending card, live. Plain DOM and ES modules, no build step,
// nothing fetched from elsewhere. This module signs in and out and wires the others: the
// state they share is in store.js, the calls that go up the module graph in `actions`.
import { api, connect, setConn, stopEvents } from './api.js';
import { els, setText } from './dom.js';
import { forgetCards, initBoard, markKeyboardTarget, reload, upsert } from './board.js';
import { goToStep } from './card-steps.js';
import { flushHeld, sendQueued } from './card-actions.js';
import { reopenCard } from './card-view.js';
import { initNewSession, loadProviders } from './new-session.js';
import { hidePushMessage, initPush, syncPush } from './push.js';
import { initRouter, navigate, revealCard, route } from './router.js';
import { applySessionHead, closeSessionView, refreshOpened, sessionCardChanged } from './session-view.js';
import { forgetSessions, reloadSessions, upsertSession } from './sessions.js';
import { actions, store } from './store.js';

function showLogin(message) {
  store.signedIn = false;
  stopEvents();
  setConn('offline');
  els.board.hidden = true;
  els.sessions.hidden = true;
  els.tabs.hidden = true;
  els.logout.hidden = true;
  els.who.hidden = true;
  els.pushToggle.hidden = true;
  hidePushMessage();
  els.conn.hidden = true;
  els.login.hidden = false;
  setText(els.loginError, message ?? '');
  els.loginError.hidden = !message;
  els.loginError.classList.add('note');
  els.tokenInput.focus();
}

function showLoginError(message) {
  setText(els.loginError, message);
  els.loginError.classList.remove('note');
  els.loginError.hidden = false;
}

async function signIn(event) {
  event.preventDefault();
  const token = els.tokenInput.value.trim();
  if (!token) {
    showLoginError('Enter the relay token.');
    return;
  }
  els.loginSubmit.disabled = true;
  try {
    await api('/api/login', { method: 'POST', json: { token } });
    els.tokenInput.value = '';
    els.loginError.hidden = true;
    await start();
  } catch (err) {
    showLoginError(err.status === 401 ? 'That is not the relay token or a personal token. Check it and try again.' : err.message);
    els.tokenInput.select();
  } finally {
    els.loginSubmit.disabled = false;
  }
}

async function signOut() {
  await flushHeld(); // an answer in its undo window is sent, not lost
  try {
    await api('/api/logout', { method: 'POST' });
  } catch {
    /* signed out locally either way */
  }
  forgetCards();
  closeSessionView();
  forgetSessions();
  showLogin();
}

const eventHandlers = {
  onOpen: () => {
    // Events are not replayed: whatever happened while away comes from the lists. Then
    // what the page took while the relay was away (or before a reload) goes, once.
    reload().then((ok) => ok && sendQueued());
    reloadSessions();
  },
  onCard: (card) => {
    upsert(card);
    if (card?.sessionId) sessionCardChanged(card.sessionId);
  },
  onSession: (s) => upsertSession(s),
  reload,
};

async function start() {
  // The providers first: cards and sessions name theirs as the relay does ("GitHub Copilot").
  await loadProviders();
  const ok = await reload();
  if (!ok) return;
  store.signedIn = true;
  els.login.hidden = true;
  els.tabs.hidden = false;
  els.logout.hidden = false;
  els.conn.hidden = false;
  showWho();
  route();
  connect(eventHandlers);
  syncPush();
}

/** Who the page is signed in as, beside Sign out: a person's name, or "operator". */
async function showWho() {
  try {
    const me = await api('/api/me');
    setText(els.who, me.kind === 'human' && !me.operator ? `Signed in as ${me.id}` : 'Operator');
    els.who.title = me.kind === 'human' && !me.operator ? 'Your answers are recorded under this name' : 'Signed in with the relay token';
    els.logout.title = `Sign out (${els.who.textContent})`;
    els.who.hidden = false;
  } catch {
    els.who.hidden = true;
  }
}

Object.assign(actions, {
  showLogin, upsert, revealCard, navigate, upsertSession, applySessionHead, refreshOpened, goToStep, markKeyboardTarget, cardReopened: reopenCard,
});
// A closing or reloading tab sends what waits in its undo window (keepalive requests).
window.addEventListener('pagehide', () => void flushHeld());
els.loginForm.addEventListener('submit', signIn);
els.logout.addEventListener('click', signOut);
initBoard();
initRouter();
initNewSession();
initPush();
start().catch((err) => console.error('askrelay:', err));
