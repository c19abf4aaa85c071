import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { cardIdFor } from '../../src/relay/relay.js';
import { browserSubscription, decryptPush, startFakePushService, type BrowserSubscription, type FakePushService } from '../fakes/push-service.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';
import { collectPageErrors, launchChromium, newContext } from './chromium.js';

// The page's side of Web Push in real Chromium against a real relay: the service worker
// (/sw.js) is served and registered, the Enable notifications button fails readably where
// the browser cannot subscribe (headless Chromium refuses every push subscription, see
// below), and, with pushManager.subscribe() standing in for the browser's push service, the
// subscription reaches the relay, the relay's real encrypted push is decrypted and handed to
// the real service worker (DevTools' "Push" button, over CDP), which shows and closes the
// notification. A notification's link (/#card=<id>) opens the page on that card.

const WAIT = { timeout: 15_000 };

let relay: TestRelay;
let push: FakePushService;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  [push, relay, browser] = await Promise.all([
    startFakePushService(),
    startTestRelay({ ASKRELAY_PUSH_ALLOW_PRIVATE: '1', ASKRELAY_PUSH_BACKOFF: '20ms', ASKRELAY_PUSH_TIMEOUT: '2s', ASKRELAY_PUSH_RETRIES: '2' }),
    launchChromium(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await relay?.stop();
  await push?.close();
});

const origin = () => new URL(relay.url).origin;

async function newPage({ notifications = true }: { notifications?: boolean } = {}): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await newContext(browser, { viewport: { width: 900, height: 700 } });
  contexts.push(context);
  if (notifications) await context.grantPermissions(['notifications'], { origin: origin() });
  const page = await context.newPage();
  const errors: string[] = [];
  collectPageErrors(page, errors);
  return { context, page, errors };
}

async function signIn(page: Page, hash = '') {
  await page.goto(`${relay.url}${hash}`);
  await page.getByTestId('token-input').fill('test-token-0123456789abcdef');
  await page.getByTestId('token-input').press('Enter');
  await page.getByTestId('board').waitFor(WAIT);
}

async function createCard(header: string, text: string): Promise<Card> {
  const res = await relay.api('/api/cards', { method: 'POST', json: { questions: [{ header, text, options: ['Yes', 'No'] }] } });
  expect(res.status).toBe(201);
  return (await res.json()) as Card;
}

async function relayKey(): Promise<string> {
  return ((await (await relay.api('/api/push/key')).json()) as { publicKey: string }).publicKey;
}

async function pushMessage(page: Page, kind: 'ok' | 'error' | 'info'): Promise<string> {
  await page.waitForSelector(`[data-testid="push-message"][data-kind="${kind}"]:not([hidden])`, WAIT);
  return (await page.getByTestId('push-message-text').textContent()) ?? '';
}

/** The worker this page registered, as the page sees it. */
const activeWorker = (page: Page) =>
  page.evaluate(async () => {
    const ready = await navigator.serviceWorker.ready;
    const found = await navigator.serviceWorker.getRegistration();
    return {
      scriptURL: ready.active?.scriptURL,
      state: ready.active?.state,
      scope: ready.scope,
      same: found?.active?.scriptURL === ready.active?.scriptURL,
    };
  });

/**
 * Stands in for the browser's push service, which headless Chromium cannot reach:
 * PushManager.subscribe() returns a subscription with a real P-256 key pair made by the
 * test (so the test can decrypt what the relay sends), and records what it was asked.
 */
async function stubPushManager(context: BrowserContext, json: BrowserSubscription['json']) {
  await context.addInitScript((sub) => {
    const w = window as unknown as { pushCalls: unknown[]; unsubscribed: number };
    w.pushCalls = [];
    w.unsubscribed = 0;
    // Kept across reloads, like a real subscription.
    const saved = localStorage.getItem('stub-subscription-key');
    const make = (key: Uint8Array) => ({
      endpoint: sub.endpoint,
      expirationTime: null,
      options: { userVisibleOnly: true, applicationServerKey: key.buffer },
      toJSON: () => ({ endpoint: sub.endpoint, expirationTime: null, keys: sub.keys }),
      unsubscribe: async () => {
        w.unsubscribed += 1;
        current = null;
        localStorage.removeItem('stub-subscription-key');
        return true;
      },
    });
    let current: unknown = saved ? make(Uint8Array.from(atob(saved), (c) => c.charCodeAt(0))) : null;
    PushManager.prototype.subscribe = async function (options?: PushSubscriptionOptionsInit) {
      const key = new Uint8Array(options?.applicationServerKey as ArrayBuffer);
      w.pushCalls.push({ userVisibleOnly: options?.userVisibleOnly, key: btoa(String.fromCharCode(...key)) });
      current = make(key);
      localStorage.setItem('stub-subscription-key', btoa(String.fromCharCode(...key)));
      return current as PushSubscription;
    };
    PushManager.prototype.getSubscription = async () => current as PushSubscription | null;
  }, json);
}

/** DevTools' "Push" button: delivers `data` to the page's service worker as a push event. */
async function pushToWorker(cdp: CDPSession, registrationId: string, data: string) {
  await cdp.send('ServiceWorker.deliverPushMessage', { origin: origin(), registrationId, data });
}

/**
 * Delivers a push to the worker until `done` holds. CDP's delivery is fire-and-forget and a
 * busy machine can lose one (the worker being started); the pushes here are idempotent (a
 * notification with the same tag replaces the last one), so delivering again is harmless.
 */
async function pushUntil<T>(cdp: CDPSession, registrationId: string, data: string, done: () => Promise<T | false>, what: string): Promise<T> {
  for (let attempt = 0; attempt < 10; attempt++) {
    await pushToWorker(cdp, registrationId, data);
    try {
      return await waitUntil(done, what, 2000);
    } catch {
      // not yet: deliver again
    }
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function workerRegistrationId(page: Page): Promise<{ cdp: CDPSession; id: string }> {
  await activeWorker(page); // a push only reaches an activated worker
  const cdp = await page.context().newCDPSession(page);
  const registrations: { registrationId: string; scopeURL: string; isDeleted: boolean }[] = [];
  cdp.on('ServiceWorker.workerRegistrationUpdated', (event) => registrations.push(...event.registrations));
  await cdp.send('ServiceWorker.enable');
  const found = await waitUntil(() => registrations.find((r) => r.scopeURL === relay.url && !r.isDeleted), 'the worker registration over CDP');
  return { cdp, id: found.registrationId };
}

const notifications = (page: Page, tag: string) =>
  page.evaluate(async (tag) => {
    const registration = await navigator.serviceWorker.ready;
    return (await registration.getNotifications({ tag })).map((n) => ({
      title: n.title,
      body: n.body,
      tag: n.tag,
      data: n.data as unknown,
      requireInteraction: n.requireInteraction,
    }));
  }, tag);

describe('the service worker', () => {
  it('is served at /sw.js without the token, as JavaScript allowed to control the whole page', async () => {
    const res = await fetch(new URL('/sw.js', relay.url));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(res.headers.get('service-worker-allowed')).toBe('/');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const body = await res.text();
    expect(body).toContain("addEventListener('push'");
    expect(body).toContain("addEventListener('notificationclick'");
  });

  it('is registered by the page on load, before sign-in, and controls the page', async () => {
    const { page, errors } = await newPage({ notifications: false });
    await page.goto(relay.url);
    await page.getByTestId('login').waitFor(WAIT);
    const worker = await activeWorker(page);
    expect(worker.scriptURL).toBe(`${origin()}/sw.js`);
    expect(worker.state).toBe('activated');
    expect(worker.scope).toBe(relay.url);
    expect(worker.same).toBe(true);
    // clients.claim(): the open page is controlled without a reload.
    await page.waitForFunction(() => navigator.serviceWorker.controller?.scriptURL.endsWith('/sw.js'), null, WAIT);
    expect(errors).toEqual([]);
  });
});

describe('Enable notifications', () => {
  it('headless Chromium refuses the push subscription: the page says so and nothing reaches the relay', async () => {
    // Measured: in a Playwright (incognito) context, pushManager.subscribe() rejects at once with
    // "AbortError: Registration failed - permission denied" even with notifications granted;
    // in a persistent profile it hangs, trying to reach Google's push service.
    const { page, errors } = await newPage();
    const posted: string[] = [];
    page.on('request', (r) => r.url().includes('/api/push/subscriptions') && posted.push(r.method()));
    await signIn(page);
    const toggle = page.getByTestId('push-toggle');
    expect(await toggle.textContent()).toBe('Enable notifications');
    await toggle.click();
    const text = await pushMessage(page, 'error');
    expect(text).toMatch(/^The browser refused a push subscription \(the browser said: “Registration failed - permission denied”\)\./);
    expect(text).toMatch(/Private windows and headless browsers cannot receive pushes/);
    expect(await toggle.textContent()).toBe('Enable notifications');
    expect(await toggle.isEnabled()).toBe(true);
    expect(posted).toEqual([]);
    // The page goes on working: a new card still arrives.
    const card = await createCard('Still live', 'Does the page still work?');
    await page.locator(`[data-testid="card"][data-card-id="${card.id}"]`).waitFor(WAIT);
    await page.getByTestId('push-message-close').click();
    expect(await page.getByTestId('push-message').isHidden()).toBe(true);
    // Chromium's own console line about incognito windows is not the page's error.
    expect(errors.filter((e) => !/does not support the Push API in incognito mode/.test(e))).toEqual([]);
  });

  it('says how to unblock notifications when the permission is denied', async () => {
    const { page, errors } = await newPage();
    await signIn(page);
    // As when the user picked Block (headless Chromium would answer "denied" by itself, slowly).
    await page.evaluate(() => {
      Object.defineProperty(Notification, 'permission', { get: () => 'denied' });
      Notification.requestPermission = async () => 'denied';
    });
    await page.getByTestId('push-toggle').click();
    expect(await pushMessage(page, 'error')).toMatch(/^Notifications are blocked for this page\. Allow them in the browser’s site settings/);
    expect(await page.getByTestId('push-toggle').textContent()).toBe('Enable notifications');
    expect(errors).toEqual([]);
  });

  it('says so when the browser has no Web Push', async () => {
    const { context, page, errors } = await newPage();
    await context.addInitScript(() => delete (window as unknown as { PushManager?: unknown }).PushManager);
    await signIn(page);
    await page.getByTestId('push-toggle').click();
    expect(await pushMessage(page, 'error')).toMatch(/^This browser cannot show notifications from the relay: it has no Web Push support/);
    expect(errors).toEqual([]);
  });

  it('shows the relay’s refusal and drops the browser’s subscription again', async () => {
    const { context, page, errors } = await newPage();
    const bad = browserSubscription(`${push.base}/refused`).json;
    await stubPushManager(context, { ...bad, keys: { ...bad.keys, p256dh: 'dG9vLXNob3J0' } });
    await signIn(page);
    await page.getByTestId('push-toggle').click();
    const text = await pushMessage(page, 'error');
    expect(text).toMatch(/^The relay refused this browser’s subscription: Expected a PushSubscription: .*p256dh/);
    expect(await page.evaluate(() => (window as unknown as { unsubscribed: number }).unsubscribed)).toBe(1);
    expect(await page.getByTestId('push-toggle').textContent()).toBe('Enable notifications');
    expect(errors).toEqual([]);
  });

  it('subscribes with the relay’s key, the relay pushes to it, the worker shows and closes the notification, and Disable removes it', async () => {
    const { context, page, errors } = await newPage();
    const sub = browserSubscription(`${push.base}/browser-1`);
    await stubPushManager(context, sub.json);
    await signIn(page);
    const toggle = page.getByTestId('push-toggle');
    await toggle.click();
    expect(await pushMessage(page, 'ok')).toMatch(/^Notifications are on\./);
    expect(await toggle.textContent()).toBe('Disable notifications');
    expect(await toggle.getAttribute('data-state')).toBe('on');
    // The switch and its message are on screen at the top, neither covering the other.
    const [toggleBox, messageBox] = [(await toggle.boundingBox())!, (await page.getByTestId('push-message').boundingBox())!];
    for (const box of [toggleBox, messageBox]) {
      expect(box.width).toBeGreaterThan(0);
      expect(box.x).toBeGreaterThanOrEqual(0);
      expect(box.x + box.width).toBeLessThanOrEqual(page.viewportSize()!.width);
      expect(box.y).toBeGreaterThanOrEqual(0);
      expect(box.y + box.height).toBeLessThanOrEqual(page.viewportSize()!.height);
    }
    const overlap = toggleBox.x < messageBox.x + messageBox.width && messageBox.x < toggleBox.x + toggleBox.width && toggleBox.y < messageBox.y + messageBox.height && messageBox.y < toggleBox.y + toggleBox.height;
    expect(overlap).toBe(false);

    // pushManager.subscribe() got userVisibleOnly and the relay's VAPID key as bytes.
    const calls = await page.evaluate(() => (window as unknown as { pushCalls: { userVisibleOnly: boolean; key: string }[] }).pushCalls);
    expect(calls).toEqual([{ userVisibleOnly: true, key: Buffer.from(await relayKey(), 'base64url').toString('base64') }]);

    // The subscription reached the relay: a new card is pushed to its endpoint, encrypted for its keys.
    const card = await createCard('Deploy', 'Ship version 2.4 to production?');
    const [cardPush] = await waitUntil(() => { const at = push.requests.filter((r) => r.path === '/browser-1'); return at.length >= 1 && at; }, 'the card push');
    const payload = decryptPush(cardPush.body, sub).toString('utf8');
    expect(JSON.parse(payload)).toMatchObject({ type: 'card', cardId: card.id, title: 'Deploy', body: 'Ship version 2.4 to production?', url: `/#card=${card.id}` });

    // The real worker gets that very payload and shows the notification.
    const { cdp, id } = await workerRegistrationId(page);
    const [shown] = await pushUntil(cdp, id, payload, async () => { const n = await notifications(page, card.id); return n.length > 0 && n; }, 'the notification');
    expect(shown).toEqual({
      title: 'Deploy',
      body: 'Ship version 2.4 to production?',
      tag: card.id,
      data: { url: `${relay.url}#card=${card.id}`, cardId: card.id, expiresAt: card.expiresAt },
      requireInteraction: true,
    });

    // Answered elsewhere: the relay's close push makes the worker close it.
    expect((await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' })).status).toBe(200);
    const closePush = await waitUntil(() => push.requests.filter((r) => r.path === '/browser-1')[1], 'the close push');
    const closePayload = decryptPush(closePush.body, sub).toString('utf8');
    expect(JSON.parse(closePayload)).toEqual({ type: 'close', cardId: card.id });
    await pushUntil(cdp, id, closePayload, async () => (await notifications(page, card.id)).length === 0, 'the notification to close');

    // After a reload the button knows the browser is subscribed; Disable removes the
    // subscription from the relay and from the browser.
    await page.reload();
    await page.waitForSelector('[data-testid="push-toggle"][data-state="on"]:not([hidden])', WAIT);
    expect(await toggle.textContent()).toBe('Disable notifications');
    await toggle.click();
    expect(await pushMessage(page, 'info')).toBe('Notifications are off for this device.');
    expect(await toggle.textContent()).toBe('Enable notifications');
    expect(await page.evaluate(() => (window as unknown as { unsubscribed: number }).unsubscribed)).toBe(1);
    const again = await relay.api('/api/push/subscriptions', { method: 'DELETE', json: { endpoint: sub.json.endpoint } });
    expect(again.status).toBe(404);
    expect(errors).toEqual([]);
  });

  it('the worker shows a card push before anyone signs in, keeps the click on the page’s origin, and still shows something for a push it cannot read', async () => {
    const { page } = await newPage();
    await page.goto(relay.url);
    const { cdp, id } = await workerRegistrationId(page);
    const elsewhere = JSON.stringify({ type: 'card', cardId: 'c_elsewhere', title: 'Hi', body: 'There', url: 'https://evil.example/#x', expiresAt: '2030-01-01T00:00:00.000Z' });
    const [n] = await pushUntil(cdp, id, elsewhere, async () => { const list = await notifications(page, 'c_elsewhere'); return list.length > 0 && list; }, 'the notification');
    // A link to another origin is not followed: the click would open the page itself.
    expect(n.data).toMatchObject({ url: relay.url });
    const [fallback] = await pushUntil(cdp, id, 'not json', async () => { const list = await notifications(page, 'askrelay'); return list.length > 0 && list; }, 'the fallback notification');
    expect(fallback.title).toBe('askrelay');
  });
});

describe('#card=<id>', () => {
  const cardEl = (page: Page, id: string) => page.locator(`[data-testid="card"][data-card-id="${id}"]`);

  async function expectFocused(page: Page, id: string) {
    await page.waitForFunction((id) => (document.activeElement as HTMLElement | null)?.dataset.cardId === id, id, WAIT);
    expect(await cardEl(page, id).getAttribute('class')).toMatch(/\blinked\b/);
    // Scrolled into view.
    const box = await cardEl(page, id).boundingBox();
    expect(box).not.toBeNull();
    expect(box!.y).toBeGreaterThanOrEqual(0);
    expect(box!.y).toBeLessThan(700);
  }

  it('opens the page on that card after sign-in, scrolled to and focused', async () => {
    const cards: Card[] = [];
    for (let i = 0; i < 6; i++) cards.push(await createCard(`Q${i}`, `Question number ${i}, with enough text to take room on the page.`));
    const target = cards[5];
    const { page, errors } = await newPage();
    await signIn(page, `#card=${target.id}`);
    await expectFocused(page, target.id);
    expect(new URL(page.url()).hash).toBe(`#card=${target.id}`);
    expect(await page.getByTestId('tab-cards').getAttribute('aria-current')).toBe('page');

    // Another link while the page is open (a second notification's click) moves there.
    await page.evaluate((id) => (location.hash = `#card=${id}`), cards[0].id);
    await expectFocused(page, cards[0].id);
    expect(await cardEl(page, target.id).getAttribute('class')).not.toMatch(/\blinked\b/);

    // A notification clicked while this tab is open: the worker focuses the tab and posts
    // {type:'open-card', url} to it (sw.js openCard); the page goes to that card.
    await page.evaluate((url) => navigator.serviceWorker.dispatchEvent(new MessageEvent('message', { data: { type: 'open-card', url } })), `${relay.url}#card=${cards[3].id}`);
    await expectFocused(page, cards[3].id);
    expect(new URL(page.url()).hash).toBe(`#card=${cards[3].id}`);
    expect(errors).toEqual([]);
  });

  it('shows a card that was already closed', async () => {
    const card = await createCard('Old', 'Was this answered?');
    expect((await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' })).status).toBe(200);
    const { page, errors } = await newPage();
    await signIn(page, `#card=${card.id}`);
    await expectFocused(page, card.id);
    expect(await cardEl(page, card.id).getAttribute('data-status')).toBe('skipped');
    expect(await cardEl(page, card.id).getByTestId('card-status').textContent()).toBe('Skipped');
    expect(errors).toEqual([]);
  });

  it('shows a card that arrives after the page opened', async () => {
    // A card asked by a tool call has a known id before it exists.
    const id = cardIdFor('s_push_test', 'call_later');
    const { page, errors } = await newPage();
    await signIn(page, `#card=${id}`);
    await page.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
    expect(await cardEl(page, id).count()).toBe(0);
    const card = await relay.relay.create({ questions: [{ text: 'Late question?', options: ['A', 'B'] }], sessionId: 's_push_test', toolCallId: 'call_later' });
    expect(card.id).toBe(id);
    await expectFocused(page, id);
    expect(errors).toEqual([]);
  });
});
