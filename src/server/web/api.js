// Requests to the relay and its event stream. A 401 anywhere but the login itself brings
// the sign-in form back (actions.showLogin).
import { els, setText } from './dom.js';
import { actions, store } from './store.js';

const RETRY_MS = 2000;

export class Unauthorized extends Error {}

export const UNREACHABLE = 'Could not reach the relay. Check that it is running, then try again.';

/** `keepalive`: the request outlives the page (an answer sent as the tab closes). */
export async function api(path, { method = 'GET', json, keepalive = false, headers = {} } = {}) {
  let res;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: { ...headers, ...(json === undefined ? { accept: 'application/json' } : { 'content-type': 'application/json', accept: 'application/json' }) },
      body: json === undefined ? undefined : JSON.stringify(json),
      keepalive,
    });
  } catch {
    throw Object.assign(new Error(UNREACHABLE), { status: 0 });
  }
  let body = null;
  try {
    body = await res.json();
  } catch {
    /* an empty or non-JSON body */
  }
  if (res.status === 401 && path !== '/api/login') {
    actions.showLogin(store.signedIn ? 'Your session ended. Enter the relay token again.' : undefined);
    throw new Unauthorized('unauthorized');
  }
  if (!res.ok) {
    const message = body?.error?.message ?? `The relay answered ${res.status}.`;
    throw Object.assign(new Error(message), { status: res.status, code: body?.error?.code, card: body?.card });
  }
  return body;
}

/**
 * The connection's state in the top bar. While signed in and not live, a banner says the
 * relay is unreachable (answers given meanwhile wait, queued: card-actions.js); once live
 * again, every "Could not reach the relay" error on the page goes away.
 */
export function setConn(state) {
  els.conn.dataset.state = state;
  setText(els.conn, { live: 'Live', reconnecting: 'Reconnecting…', offline: 'Offline' }[state]);
  const down = state !== 'live' && store.signedIn;
  els.outage.hidden = !down;
  document.body.classList.toggle('relay-down', down);
  if (state === 'live') {
    for (const el of document.querySelectorAll('.error')) {
      if (el.textContent?.startsWith(UNREACHABLE)) {
        el.hidden = true;
        el.textContent = '';
      }
    }
  }
}

export function stopEvents() {
  clearTimeout(store.retryTimer);
  store.events?.close();
  store.events = null;
}

/**
 * Listens to /api/events. `handlers`: onOpen (events are not replayed: whatever happened
 * while away comes from the lists), onCard, onSession, and reload (resolves to false when
 * the relay cannot be reached or we are signed out) before a retry.
 */
export function connect(handlers = store.eventHandlers) {
  stopEvents();
  store.eventHandlers = handlers;
  const source = new EventSource('/api/events');
  store.events = source;
  source.addEventListener('open', () => {
    setConn('live');
    handlers.onOpen();
  });
  const on = (handle) => (event) => {
    try {
      handle(JSON.parse(event.data));
    } catch (err) {
      console.error('askrelay: bad event', err);
    }
  };
  source.addEventListener('card.created', on(handlers.onCard));
  source.addEventListener('card.updated', on(handlers.onCard));
  source.addEventListener('session.updated', on(handlers.onSession));
  source.addEventListener('error', () => {
    if (store.events !== source) return;
    if (source.readyState !== EventSource.CLOSED) {
      setConn('reconnecting');
      return;
    }
    // The browser gave up (e.g. a 401 or the relay is down): find out why, then retry.
    setConn('reconnecting');
    store.events = null;
    store.retryTimer = setTimeout(async () => {
      if (await handlers.reload()) connect(handlers);
      else if (store.signedIn) store.retryTimer = setTimeout(() => store.signedIn && connect(handlers), RETRY_MS);
    }, RETRY_MS);
  });
}
