// Notifications (Web Push).
import { Unauthorized, api } from './api.js';
import { els, setText } from './dom.js';
import { route } from './router.js';
import { store } from './store.js';

// The service worker (/sw.js) shows a notification for each new card and closes it when
// the card is answered elsewhere, expires or is cancelled; a click brings this page to
// #card=<id>. The button subscribes this browser with the relay's VAPID key
// (GET /api/push/key) and hands the subscription to the relay (POST /api/push/subscriptions);
// Disable undoes both (DELETE /api/push/subscriptions).

const SUBSCRIBE_TIMEOUT_MS = 20_000;
const pushSupported =
  window.isSecureContext && 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;

function registerWorker() {
  if (!('serviceWorker' in navigator)) return;
  store.workerRegistration = navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch((err) => {
    console.warn('askrelay: could not register the service worker:', err);
    return null;
  });
  // A click on a notification while this tab is open: the worker asks us to show the card.
  navigator.serviceWorker.addEventListener('message', (event) => {
    if (event.data?.type !== 'open-card') return;
    let target;
    try {
      target = new URL(event.data.url, location.href);
    } catch {
      return;
    }
    if (target.origin !== location.origin) return;
    if (location.hash === target.hash) route();
    else location.hash = target.hash; // hashchange → route() → the card
  });
}

function showPushMessage(text, kind = 'info') {
  els.pushMessage.dataset.kind = kind;
  setText(els.pushMessageText, text);
  els.pushMessage.hidden = false;
}

export function hidePushMessage() {
  els.pushMessage.hidden = true;
  setText(els.pushMessageText, '');
}

function setPushToggle(on) {
  els.pushToggle.dataset.state = on ? 'on' : 'off';
  setText(els.pushToggle, on ? 'Disable notifications' : 'Enable notifications');
  els.pushToggle.title = on
    ? 'New cards show a notification on this device. Click to stop them.'
    : 'Show a notification on this device for every new card, even when this page is closed.';
}

async function currentSubscription() {
  const registration = await store.workerRegistration;
  return registration ? registration.pushManager.getSubscription().catch(() => null) : null;
}

/** After sign-in: the button shows whether this browser is subscribed; the relay is reminded of it. */
export async function syncPush() {
  els.pushToggle.hidden = false;
  const subscription = pushSupported ? await currentSubscription() : null;
  setPushToggle(Boolean(subscription) && Notification.permission === 'granted');
  if (subscription && Notification.permission === 'granted') {
    // The relay may have lost it (a new data folder): POST is idempotent (200 when known).
    api('/api/push/subscriptions', { method: 'POST', json: subscription.toJSON() }).catch(() => {});
  }
}

async function togglePush() {
  if (store.pushBusy) return;
  store.pushBusy = true;
  els.pushToggle.disabled = true;
  els.pushToggle.setAttribute('aria-busy', 'true');
  try {
    if (els.pushToggle.dataset.state === 'on') await disablePush();
    else await enablePush();
  } catch (err) {
    if (!(err instanceof Unauthorized)) showPushMessage(err.message, 'error');
  } finally {
    store.pushBusy = false;
    els.pushToggle.disabled = false;
    els.pushToggle.removeAttribute('aria-busy');
  }
}

async function enablePush() {
  hidePushMessage();
  if (!pushSupported) {
    throw new Error(
      window.isSecureContext
        ? 'This browser cannot show notifications from the relay: it has no Web Push support. Use a current Chrome, Edge, Firefox or Safari.'
        : 'Notifications need a secure page: open the relay over https, or at http://127.0.0.1 or http://localhost.',
    );
  }
  const registration = await store.workerRegistration;
  if (!registration) throw new Error('The browser would not install the relay’s service worker (/sw.js), so notifications cannot work. Reload the page and try again.');
  const permission = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
  if (permission === 'denied') {
    throw new Error('Notifications are blocked for this page. Allow them in the browser’s site settings (the icon left of the address), then click Enable notifications again.');
  }
  if (permission !== 'granted') throw new Error('Notifications were not allowed. Click Enable notifications again and choose Allow.');

  const { publicKey } = await api('/api/push/key');
  await navigator.serviceWorker.ready;
  let subscription = await registration.pushManager.getSubscription();
  if (subscription && !sameKey(subscription.options?.applicationServerKey, publicKey)) {
    await subscription.unsubscribe().catch(() => {}); // made for another relay key
    subscription = null;
  }
  if (!subscription) subscription = await subscribe(registration, publicKey);
  try {
    await api('/api/push/subscriptions', { method: 'POST', json: subscription.toJSON() });
  } catch (err) {
    // Without the relay's copy nothing would ever arrive: undo the browser's side too.
    await subscription.unsubscribe().catch(() => {});
    if (err instanceof Unauthorized) throw err;
    throw new Error(`The relay refused this browser’s subscription: ${err.message}`);
  }
  setPushToggle(true);
  showPushMessage('Notifications are on. Every new card shows one on this device, even when this page is closed; a click opens the card.', 'ok');
}

async function subscribe(registration, publicKey) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' })), SUBSCRIBE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: fromBase64Url(publicKey) }),
      timeout,
    ]);
  } catch (err) {
    throw new Error(subscribeFailure(err));
  } finally {
    clearTimeout(timer);
  }
}

/** What went wrong with pushManager.subscribe(), in words a person can act on. */
function subscribeFailure(err) {
  const said = err?.message ? ` (the browser said: “${err.message}”)` : '';
  if (err?.name === 'TimeoutError') {
    return 'The browser’s push service did not answer. Check the internet connection and try again: the browser needs it to subscribe.';
  }
  if (err?.name === 'NotAllowedError' || /permission/i.test(err?.message ?? '')) {
    return `The browser refused a push subscription${said}. Private windows and headless browsers cannot receive pushes: open the page in a normal window, and check that notifications are allowed for this site.`;
  }
  if (err?.name === 'AbortError') {
    return `The browser could not reach its push service${said}. Check the internet connection and try again.`;
  }
  return `The browser could not subscribe to notifications${said}.`;
}

async function disablePush() {
  hidePushMessage();
  const subscription = await currentSubscription();
  if (subscription) {
    try {
      await api('/api/push/subscriptions', { method: 'DELETE', json: { endpoint: subscription.endpoint } });
    } catch (err) {
      if (err instanceof Unauthorized) throw err;
      // 404: the relay had already forgotten it, which is what we want.
      if (err.status !== 404) throw new Error(`The relay could not remove this browser’s subscription: ${err.message}`);
    }
    await subscription.unsubscribe().catch(() => {});
  }
  setPushToggle(false);
  showPushMessage('Notifications are off for this device.', 'info');
}

function fromBase64Url(text) {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const raw = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

function sameKey(buffer, publicKey) {
  if (!buffer) return true; // the browser does not say: assume it is ours
  const a = new Uint8Array(buffer);
  const b = fromBase64Url(publicKey);
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** The notifications button and its message; the service worker registers at once. */
export function initPush() {
  els.pushMessageClose.addEventListener('click', hidePushMessage);
  els.pushToggle.addEventListener('click', togglePush);
  registerWorker();
}
