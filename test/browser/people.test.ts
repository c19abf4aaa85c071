import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { collectPageErrors, launchChromium, newContext } from './chromium.js';

// The page signed in as two people (docs/routing.md) in Chromium: each signs in with their
// personal token, the page says who is signed in, and an answer given on one page is recorded
// under that person and shows on the other page.

const WAIT = { timeout: 5000 };
let relay: TestRelay;
let browser: Browser;
const errors: string[] = [];

beforeAll(async () => {
  [relay, browser] = await Promise.all([startTestRelay({ ASKRELAY_WAIT: '1h' }), launchChromium()]);
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
    const [ada, bea] = await Promise.all([person('ada'), person('bea')]);
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
});
