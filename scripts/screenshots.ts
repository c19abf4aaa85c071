// Screenshots of the Sessions view and of the board of cards for a person to look at (docs,
// reviews): `npm run screenshots [folder]`, test-artifacts/ by default. Not a test: nothing
// compares them, and Chromium's font rendering differs between machines. What they show is
// asserted through the DOM in test/browser/sessions.test.ts and test/browser/web-page.test.ts.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { Card } from '../src/cards/model.js';
import type { Session } from '../src/sessions/model.js';
import { collectPageErrors, launchChromium } from '../test/browser/chromium.js';
import { lastToolResult, lastUserText, startAnthropicServer, type MessagesRequest, type ScriptedReply } from '../test/fakes/anthropic-server.js';
import { BOARD_CARDS } from '../test/support/board-cards.js';
import { startTestRelay } from '../test/support/running-relay.js';
import { waitUntil } from '../test/support/wait-until.js';

const PROMPT = 'Set up the storage for the orders service.';
const QUESTION = 'Which database should the orders service use?';
const WAIT = { timeout: 15_000 };

async function model(request: MessagesRequest): Promise<ScriptedReply> {
  const text = lastUserText(request);
  if (text === PROMPT) {
    const options = [
      { label: 'PostgreSQL (Recommended)', description: 'Same as the other services' },
      { label: 'SQLite', description: 'One file, no server' },
    ];
    return { text: 'Before I start: one choice is yours.', toolUse: { name: 'AskUserQuestion', input: { questions: [{ question: QUESTION, header: 'Database', multiSelect: false, options }] } } };
  }
  if (!text && lastToolResult(request)) return { text: 'PostgreSQL it is. I created the orders schema and its first migration.' };
  return { text: `Done: ${text.replace(/^Add/, 'added').replace(/\.$/, '')}, and the tests pass.` };
}

const out = process.argv[2] ?? 'test-artifacts';
mkdirSync(out, { recursive: true });
const shot = (page: Page, name: string, fullPage = true) => page.screenshot({ path: join(out, `${name}.png`), fullPage });
/** Focus rings and arrival animations are not what the pictures are about. */
async function settle(page: Page): Promise<void> {
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  // Only finite ones: a waiting badge pulses for ever.
  await page.evaluate(() => Promise.all(document.getAnimations().filter((a) => a.effect?.getComputedTiming().iterations !== Infinity).map((a) => a.finished)));
}

const fake = await startAnthropicServer({ model });
const relay = await startTestRelay({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h' });
const browser = await launchChromium();
const errors: string[] = [];
try {
  const page = await (await browser.newContext({ viewport: { width: 900, height: 1000 } })).newPage();
  collectPageErrors(page, errors);
  await page.goto(relay.url);
  await page.getByTestId('token-input').fill(relay.token);
  await page.getByTestId('token-input').press('Enter');
  await page.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
  await page.getByTestId('tab-sessions').click();

  await page.getByTestId('new-session').click();
  await page.locator('[data-testid="new-session-form"][data-state="ready"]').waitFor(WAIT); // the relay's providers are in
  await page.getByTestId('session-provider').selectOption('openai');
  await page.getByTestId('session-engine').selectOption('extension');
  await page.getByTestId('session-ask-user-variant').selectOption('form');
  await page.getByTestId('session-prompt').fill('Tidy up the release notes.');
  await settle(page);
  await shot(page, 'sessions-new-openai');
  await page.getByTestId('session-prompt').fill('');
  await page.getByTestId('new-session-cancel').click();

  const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt: PROMPT, agentsMayAnswer: true } });
  const id = ((await res.json()) as Session).id;
  await page.goto(`${relay.url}#sessions/${id}`);
  await page.locator('.session-view[data-status="waiting"]').waitFor(WAIT);
  await settle(page);
  await shot(page, 'sessions-waiting');
  await page.getByTestId('back-to-sessions').click();
  await page.waitForSelector(`[data-testid="session"][data-session-id="${id}"][data-status="waiting"]`, WAIT);
  await shot(page, 'sessions-list-waiting');

  const card = await waitUntil(async () => ((await (await relay.api(`/api/cards?sessionId=${id}&status=pending`)).json()) as { cards: Card[] }).cards[0], 'the card', 15_000);
  await page.locator(`[data-testid="session"][data-session-id="${id}"]`).getByTestId('session-status').click();
  await page.locator(`[data-testid="card"][data-card-id="${card.id}"]`).waitFor(WAIT);
  await settle(page);
  await shot(page, 'sessions-card', false);
  await page.locator(`[data-testid="card"][data-card-id="${card.id}"] [data-testid="option"][data-label="PostgreSQL (Recommended)"]`).click();

  await page.goto(`${relay.url}#sessions/${id}`);
  await page.locator('.session-view[data-status="idle"]').waitFor(WAIT);
  await page.getByTestId('message-input').fill('Add an index on orders.created_at.');
  await page.getByTestId('message-input').press('Enter');
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="transcript"] [data-testid="entry"]').length === 6, null, WAIT);
  await page.locator('.session-view[data-status="idle"]').waitFor(WAIT);
  await settle(page);
  await shot(page, 'sessions');
  await page.emulateMedia({ colorScheme: 'dark' });
  await settle(page);
  await page.waitForTimeout(300); // colour transitions are not Web Animations
  await shot(page, 'sessions-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.waitForTimeout(300);

  await page.setViewportSize({ width: 390, height: 844 });
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  await shot(page, 'sessions-phone', false);
  await page.getByTestId('back-to-sessions').click();
  await page.getByTestId('session-list').waitFor(WAIT);
  await shot(page, 'sessions-list-phone');
  await page.setViewportSize({ width: 900, height: 1000 });
  await shot(page, 'sessions-list');
  await page.getByTestId('new-session').click();
  await page.locator('[data-testid="new-session-form"][data-state="ready"]').waitFor(WAIT); // the relay's providers are in
  await settle(page);
  await shot(page, 'sessions-new');
  await page.getByTestId('new-session-cancel').click();

  // The board with several kinds of card (docs/images/web-page-*.png come from the browser test run instead).
  const made: Card[] = [];
  for (const input of Object.values(BOARD_CARDS)) made.push((await (await relay.api('/api/cards', { method: 'POST', json: input })).json()) as Card);
  await page.getByTestId('tab-cards').click();
  await page.waitForFunction((n) => document.querySelectorAll('[data-testid="card"][data-status="pending"]').length === n, made.length, WAIT);
  const several = page.locator(`[data-testid="card"][data-card-id="${made[2].id}"]`);
  await several.getByText('Select several').click();
  await several.locator('[data-testid="option"][data-label="Error logs"]').click();
  await page.evaluate(() => window.scrollTo(0, 0));
  await settle(page);
  await shot(page, 'web-page');
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.waitForTimeout(300); // colour transitions are not Web Animations
  await shot(page, 'web-page-dark');
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForTimeout(300);
  await shot(page, 'web-page-phone');
  if (errors.length) throw new Error(`the page reported errors:\n${errors.join('\n')}`);
  console.log(`13 screenshots in ${out}/`);
} finally {
  await browser.close();
  await relay.stop();
  await fake.close();
}
