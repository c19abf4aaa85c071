import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { FakeClock } from '../support/fake-clock.js';
import { DB_FILE } from '../../src/start.js';
import { startRelayWithClock, type TestRelay } from '../support/running-relay.js';
import { lockSqliteFile } from '../support/sqlite-locker.js';
import { collectPageErrors, launchChromium, newContext } from './chromium.js';

// Answers the page keeps, in real Chromium against a real relay whose clock (and the page's)
// moves only when the test says: Answer anyway on an expired card, the delivery line following
// where each answer got to as the relay's events tell it, and half-typed answers kept across
// a reload.

const WAIT = { timeout: 5000 };

let relay: TestRelay;
let clock: FakeClock;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  [{ relay, clock }, browser] = await Promise.all([startRelayWithClock(), launchChromium()]);
  context = await newContext(browser, { viewport: { width: 900, height: 1100 } });
  page = await context.newPage();
  collectPageErrors(page, pageErrors);
  await page.clock.setFixedTime(clock.now());
  await page.goto(relay.url);
  await page.getByTestId('token-input').fill(relay.token);
  await page.getByTestId('token-input').press('Enter');
  await page.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
});

afterAll(async () => {
  await browser?.close();
  await relay?.stop();
  expect(pageErrors).toEqual([]);
});

async function createCard(question: string): Promise<Card> {
  const res = await relay.api('/api/cards', { method: 'POST', json: { waitSeconds: 90, questions: [{ text: question, options: ['PostgreSQL', 'SQLite'] }] } });
  expect(res.status).toBe(201);
  return (await res.json()) as Card;
}

const cardOn = (id: string) => page.locator(`[data-testid="card"][data-card-id="${id}"]`);
const getCard = async (id: string) => (await (await relay.api(`/api/cards/${id}`)).json()) as Card;
const deliveryOf = async (id: string, state: string) => {
  await page.waitForSelector(`[data-testid="card"][data-card-id="${id}"][data-delivery="${state}"]`, WAIT);
  return cardOn(id).getByTestId('delivery').innerText();
};

/** The relay's clock and the page's, on together. */
async function advance(ms: number) {
  clock.advance(ms);
  await page.clock.setFixedTime(clock.now());
}

describe('the page and late answers', () => {
  it('Answer anyway on an expired card sends a late answer; the line then follows its delivery', async () => {
    const created = await createCard('Which database, late?');
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    expect(await card.getByTestId('answer-late').isHidden()).toBe(true);
    await advance(90_000);
    await page.waitForSelector(`[data-testid="card"][data-card-id="${created.id}"][data-status="expired"]`, WAIT);
    await card.getByTestId('answer-late').click();
    expect(await card.getByTestId('card-status').innerText()).toMatch(/^Answering late/);
    await card.locator('[data-testid="option"][data-label="SQLite"]').click();

    expect(await deliveryOf(created.id, 'sent')).toBe('Late answer: SQLite. Sent; the agent has not taken it yet.');
    const stored = await getCard(created.id);
    expect(stored).toMatchObject({ status: 'expired', lateAnswer: { answer: { q1: { selected: ['SQLite'] } }, answeredBy: { kind: 'human', surface: 'web' } } });
    expect(await card.getByTestId('answer-late').isHidden()).toBe(true);
    expect(await card.getAttribute('data-status')).toBe('expired');

    // askrelay ask --accept-late takes it: the page hears the delivery.
    const taken = await relay.api(`/api/cards/${created.id}/wait?timeout=5&late=1&client=ask`);
    expect(taken.status).toBe(200);
    expect(await deliveryOf(created.id, 'delivered')).toMatch(/^Late answer: SQLite\. Delivered to askrelay ask, /);
  });

  it('an answer nobody takes turns from sent to not delivered once the card\'s wait is over', async () => {
    const created = await createCard('Which database, now?');
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    await card.locator('[data-testid="option"][data-label="PostgreSQL"]').click();
    expect(await deliveryOf(created.id, 'sent')).toBe('Sent; the agent has not taken it yet.');
    await advance(90_000);
    expect(await deliveryOf(created.id, 'undelivered')).toBe('Not delivered: nobody was waiting for it.');
  });

  it('an answer a long poll takes reads delivered, with where it went', async () => {
    const created = await createCard('Which database, polled?');
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    const polling = relay.api(`/api/cards/${created.id}/wait?timeout=30`);
    await card.locator('[data-testid="option"][data-label="SQLite"]').click();
    expect((await polling).status).toBe(200);
    expect(await deliveryOf(created.id, 'delivered')).toMatch(/^Delivered to the long poll, /);
  });
});

describe('drafts', () => {
  it('a half-typed answer survives a reload (the step, the pick, the words, a form\'s fields) and goes when the card is answered', async () => {
    const res = await relay.api('/api/cards', {
      method: 'POST',
      json: { waitSeconds: 600, questions: [{ text: 'Which database, drafted?', options: ['PostgreSQL', 'SQLite'] }, { text: 'Why, drafted?' }] },
    });
    const steps = (await res.json()) as Card;
    const formRes = await relay.api('/api/cards', {
      method: 'POST',
      json: { waitSeconds: 600, layout: 'form', questions: [{ id: 'name', text: 'Project name?' }, { id: 'lang', text: 'Language?', options: ['TS', 'Go'] }] },
    });
    const form = (await formRes.json()) as Card;
    await cardOn(steps.id).waitFor(WAIT);
    await cardOn(steps.id).locator('[data-testid="option"][data-label="SQLite"]').click();
    await cardOn(steps.id).getByTestId('free-text').fill('Because it is small');
    await cardOn(form.id).locator('[data-testid="field"][data-question-id="name"]').getByTestId('field-input').fill('askrelay');
    await cardOn(form.id).locator('[data-testid="field"][data-question-id="lang"]').getByText('Go').click();

    await page.reload();
    await page.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
    const card = cardOn(steps.id);
    await card.waitFor(WAIT);
    expect(await card.getByTestId('question-text').innerText()).toBe('Why, drafted?');
    expect(await card.getByTestId('free-text').inputValue()).toBe('Because it is small');
    await card.getByTestId('back').click();
    expect(await card.locator('[data-testid="option"].picked').getAttribute('data-label')).toBe('SQLite');
    expect(await cardOn(form.id).getByTestId('field-input').inputValue()).toBe('askrelay');
    expect(await cardOn(form.id).locator('[data-testid="field-option"][value="Go"]').isChecked()).toBe(true);

    // Answered: the draft is gone from this browser.
    await card.locator('[data-testid="option"][data-label="SQLite"]').click();
    await card.getByTestId('reply').click();
    await page.waitForSelector(`[data-testid="card"][data-card-id="${steps.id}"][data-status="answered"]`, WAIT);
    expect((await getCard(steps.id)).answer).toEqual({ q1: { selected: ['SQLite'] }, q2: { selected: [], text: 'Because it is small' } });
    expect(await page.evaluate((id) => localStorage.getItem(`askrelay.draft.${id}`), steps.id)).toBeNull();
    expect(await page.evaluate((id) => localStorage.getItem(`askrelay.draft.${id}`), form.id)).not.toBeNull();
  });
});

describe('an answer the relay could not take', () => {
  it('answered first elsewhere (409): the card shows the winning answer and who gave it, not an error', async () => {
    const created = await createCard('Which database, raced?');
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    // The page's answer is held on its way (a slow network) until the API has answered first.
    let letGo = () => {};
    const held = new Promise<void>((resolve) => (letGo = resolve));
    await page.route(`**/api/cards/${created.id}/answer`, async (route) => {
      await held;
      await route.continue();
    });
    await card.locator('[data-testid="option"][data-label="SQLite"]').click();
    const first = await relay.api(`/api/cards/${created.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['PostgreSQL'] } } } });
    expect(first.status).toBe(200);
    letGo();
    await page.waitForFunction((id) => document.querySelector(`[data-card-id="${id}"] [data-testid="card-status"]`)?.textContent?.startsWith('Answered first elsewhere'), created.id, WAIT);
    expect(await card.getByTestId('card-status').innerText()).toMatch(/^Answered first elsewhere: PostgreSQL \(answered by you through the API, \d{1,2}:\d{2}/);
    expect(await card.getByTestId('card-error').isHidden()).toBe(true);
    expect((await getCard(created.id)).answer).toEqual({ q1: { selected: ['PostgreSQL'] } });
    await page.unroute(`**/api/cards/${created.id}/answer`);
  });

  it('shows why and Retry, which sends the very same answer (the same Idempotency-Key) once the relay can take it', { timeout: 60_000 }, async () => {
    const created = await createCard('Which database, retried?');
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    const keys: string[] = [];
    page.on('request', (r) => r.url().endsWith(`/api/cards/${created.id}/answer`) && keys.push(r.headers()['idempotency-key'] ?? ''));
    // Another program holds the SQLite file's write lock: the relay answers 503 after its busy timeout.
    const lock = await lockSqliteFile(join(relay.dataDir, DB_FILE));
    try {
      await card.locator('[data-testid="option"][data-label="SQLite"]').click();
      await page.waitForSelector(`[data-testid="card"][data-card-id="${created.id}"][data-delivery="failed"]`, { timeout: 20_000 });
      expect(await card.getByTestId('card-error').innerText()).toBe(
        'The database is locked by another program (SQLite: database is locked); nothing was changed, try again in a moment. Retry',
      );
    } finally {
      await lock.release();
    }
    await card.getByTestId('retry').click();
    await page.waitForSelector(`[data-testid="card"][data-card-id="${created.id}"][data-status="answered"]`, WAIT);
    expect((await getCard(created.id)).answer).toEqual({ q1: { selected: ['SQLite'] } });
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
  });
});
