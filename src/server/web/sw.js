// askrelay's service worker: shows a notification for each new card the relay pushes,
// closes it again once the card is answered elsewhere, expires or is cancelled, and opens
// the page on the card when the notification is clicked. Payloads are the JSON that
// src/push/push-sender.ts sends:
//   {type: "card", cardId, title, body, url, expiresAt}
//   {type: "close", cardId}

self.addEventListener('install', () => {
  // A new version takes over at once: it only ever shows and closes notifications.
  self.skipWaiting();
});

self.addEventListener('activate', (event) => {
  event.waitUntil(self.clients.claim());
});

self.addEventListener('push', (event) => {
  event.waitUntil(handlePush(readPayload(event)));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil(openCard(event.notification.data?.url));
});

/** The push's JSON, or null when it carries none (or something that is not JSON). */
function readPayload(event) {
  if (!event.data) return null;
  try {
    return event.data.json();
  } catch {
    return null;
  }
}

/** Only the page's own origin: a payload cannot send the click elsewhere. */
function cardUrl(url) {
  try {
    const target = new URL(url || '/', self.registration.scope);
    return target.origin === self.location.origin ? target.href : self.registration.scope;
  } catch {
    return self.registration.scope;
  }
}

async function handlePush(payload) {
  if (payload?.type === 'close' && typeof payload.cardId === 'string') {
    const open = await self.registration.getNotifications({ tag: payload.cardId });
    for (const notification of open) notification.close();
    return;
  }
  if (payload?.type === 'card' && typeof payload.cardId === 'string') {
    await self.registration.showNotification(String(payload.title || 'A question for you'), {
      body: String(payload.body ?? ''),
      tag: payload.cardId,
      data: { url: cardUrl(payload.url), cardId: payload.cardId, expiresAt: payload.expiresAt },
      requireInteraction: true,
    });
    return;
  }
  // A push must show something (userVisibleOnly): an unknown payload still says where to look.
  await self.registration.showNotification('askrelay', { body: 'Something new on the relay.', tag: 'askrelay', data: { url: self.registration.scope } });
}

/**
 * Focuses a tab of the page and tells it which card to show (it sets #card=<id> itself,
 * without a reload), or opens a new tab on the card.
 */
async function openCard(url) {
  const target = cardUrl(url);
  const tabs = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const tab = tabs.find((c) => new URL(c.url).origin === self.location.origin);
  if (tab) {
    try {
      const focused = (await tab.focus()) ?? tab;
      focused.postMessage({ type: 'open-card', url: target });
      return;
    } catch {
      /* focus is refused without a user gesture in some browsers: open a new tab instead */
    }
  }
  await self.clients.openWindow(target);
}
