import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { FakeClock } from '../support/fake-clock.js';
import { startRelayWithClock, type TestRelay } from '../support/running-relay.js';
import { collectPageErrors, launchChromium, newContext } from './chromium.js';

// The page signed in as two people (docs/routing.md) in Chromium: each signs in with their
// personal token, the page says who is signed in, and an answer given on one page is recorded
// under that person and shows on the other page. Routes: a card restricted to one person
// shows on their page (with who it goes to) and never on the other's, until it escalates
// to them on the relay's clock.

const WAIT = { timeout: 5000 };
let relay: TestRelay;
let clock: FakeClock;
let browser: Browser;
const errors: string[] = [];
let ada: string;
let bea: string;

beforeAll(async () => {
  let started: Awaited<ReturnType<typeof startRelayWithClock>>;
  [started, browser] = await Promise.all([startRelayWithClock({ ASKRELAY_WAIT: '1h' }), launchChromium()]);
  ({ relay, clock } = started);
  [ada, bea] = await Promise.all([person('ada'), person('bea')]);
});
afterAll(async () => {
  await browser?.close();
  await relay?.stop();
});

async function person(name: string): Promise<string> {
  const res = await relay.api('/api/users', { method: 'POST', json: { name } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { token: string }).token;
}

async function signedInAs(token: string): Promise<Page> {
  const context = await newContext(browser, { viewport: { width: 900, height: 900 } });
  const page = await context.newPage();
  collectPageErrors(page, errors);
  await page.goto(relay.url);
  await page.getByTestId('token-input').fill(token);
  await page.getByTestId('token-input').press('Enter');
  await page.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
  return page;
}

describe('the page signed in as people', () => {
  it('says who is signed in, records an answer under that person, and shows it to the other', async () => {
    const [adaPage, beaPage] = [await signedInAs(ada), await signedInAs(bea)];
    expect(await adaPage.getByTestId('who').textContent()).toBe('Signed in as ada');
    expect(await beaPage.getByTestId('who').textContent()).toBe('Signed in as bea');

    const card = (await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ id: 'db', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] } })).json()) as Card;
    const on = (p: Page) => p.locator(`[data-testid="card"][data-card-id="${card.id}"]`);
    await on(adaPage).waitFor(WAIT);
    await on(beaPage).waitFor(WAIT);
    await on(adaPage).locator('[data-testid="option"][data-label="SQLite"]').click();
    await beaPage.waitForSelector(`[data-testid="card"][data-card-id="${card.id}"][data-status="answered"]`, WAIT);
    const stored = (await (await relay.api(`/api/cards/${card.id}`)).json()) as Card;
    expect(stored.answeredBy).toEqual({ kind: 'human', id: 'ada', surface: 'web' });

    // A wrong token is told so; the operator's page says "Operator".
    const stranger = await (await newContext(browser, { viewport: { width: 900, height: 900 } })).newPage();
    await stranger.goto(relay.url);
    await stranger.getByTestId('token-input').fill('asp_not-a-token-0123456789abcdefgh');
    await stranger.getByTestId('token-input').press('Enter');
    await stranger.waitForSelector('[data-testid="login-error"]:not([hidden])', WAIT);
    expect(await stranger.getByTestId('login-error').textContent()).toBe('That is not the relay token or a personal token. Check it and try again.');
    const operator = await signedInAs(relay.token);
    expect(await operator.getByTestId('who').textContent()).toBe('Operator');
    expect(errors).toEqual([]);
  });

  it('a card restricted to ada shows only on her page, with who it goes to, until it escalates to bea', async () => {
    const routes = [{ name: 'payments', match: { labels: { team: 'payments' } }, to: ['ada'], restrict: true, escalate: [{ after: '15m', to: ['bea'] }] }];
    expect((await relay.api('/api/routes', { method: 'PUT', json: { routes } })).status).toBe(200);
    const [adaPage, beaPage] = [await signedInAs(ada), await signedInAs(bea)];
    const ask = async (labels: Record<string, string>) =>
      (await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ id: 'go', text: 'Refund the order?', options: ['Yes', 'No'] }], labels } })).json()) as Card;
    const restricted = await ask({ team: 'payments' });
    const open = await ask({ team: 'search' });
    const on = (p: Page, card: Card) => p.locator(`[data-testid="card"][data-card-id="${card.id}"]`);

    await on(adaPage, restricted).waitFor(WAIT);
    expect(await on(adaPage, restricted).getByTestId('routed-to').textContent()).toBe('→ ada');
    expect(await on(adaPage, restricted).getByTestId('routed-to').getAttribute('title')).toContain('Only they (and the operator) see it.');
    // The open card came after it: bea's page heard both events, and showed only the open one.
    await on(beaPage, open).waitFor(WAIT);
    expect(await on(beaPage, restricted).count()).toBe(0);
    await beaPage.reload();
    await beaPage.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
    await on(beaPage, open).waitFor(WAIT);
    expect(await on(beaPage, restricted).count()).toBe(0);

    clock.advance(15 * 60_000);
    await on(beaPage, restricted).waitFor(WAIT);
    await adaPage.waitForSelector(`[data-testid="card"][data-card-id="${restricted.id}"] [data-testid="routed-to"]:text-is("→ ada, bea")`, WAIT);
    expect(await on(beaPage, restricted).getByTestId('routed-to').textContent()).toBe('→ ada, bea');
    await on(beaPage, restricted).locator('[data-testid="option"][data-label="No"]').click();
    await adaPage.waitForSelector(`[data-testid="card"][data-card-id="${restricted.id}"][data-status="answered"]`, WAIT);
    expect(((await (await relay.api(`/api/cards/${restricted.id}`)).json()) as Card).answeredBy).toEqual({ kind: 'human', id: 'bea', surface: 'web' });
    expect(errors).toEqual([]);
  });
});
