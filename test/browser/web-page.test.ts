import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { collectPageErrors, launchChromium } from './chromium.js';

// The web page against a real relay in a real browser: cards arrive over SSE, every
// answer made on the page is checked through the API.

const WAIT = { timeout: 5000 };

let relay: TestRelay;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  [relay, browser] = await Promise.all([startTestRelay(), launchChromium()]);
  context = await browser.newContext({ viewport: { width: 900, height: 1100 } });
  page = await context.newPage();
  collectPageErrors(page, pageErrors);
});

afterAll(async () => {
  await browser?.close();
  await relay?.stop();
});

async function createCard(body: Record<string, unknown>): Promise<Card> {
  const res = await relay.api('/api/cards', { method: 'POST', json: body });
  expect(res.status).toBe(201);
  return (await res.json()) as Card;
}

async function getCard(id: string): Promise<Card> {
  const res = await relay.api(`/api/cards/${id}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Card;
}

const cardOn = (id: string): Locator => page.locator(`[data-testid="card"][data-card-id="${id}"]`);
const option = (card: Locator, label: string): Locator =>
  card.locator(`[data-testid="option"][data-label="${label}"]`);

async function statusOf(card: Locator, status: string) {
  await page.waitForSelector(`[data-testid="card"][data-card-id="${await card.getAttribute('data-card-id')}"][data-status="${status}"]`, WAIT);
  return (await card.getByTestId('card-status').textContent())?.trim();
}

async function expectAnswered(id: string, answer: Card['answer']) {
  const card = await getCard(id);
  expect(card.status).toBe('answered');
  expect(card.answer).toEqual(answer);
}

describe('web page', () => {
  it('refuses a wrong token, opens with the right one, and keeps the token out of storage', async () => {
    await page.goto(relay.url);
    await page.getByTestId('login').waitFor(WAIT);
    await page.getByTestId('token-input').fill('not-the-token');
    await page.getByTestId('login-submit').click();
    await page.getByTestId('login-error').waitFor(WAIT);
    expect(await page.getByTestId('login-error').textContent()).toMatch(/not the relay token/i);
    expect(await page.getByTestId('board').isHidden()).toBe(true);

    await page.getByTestId('token-input').fill('test-token-0123456789abcdef');
    await page.getByTestId('token-input').press('Enter');
    await page.getByTestId('board').waitFor(WAIT);
    await page.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
    expect(await page.getByTestId('login').isHidden()).toBe(true);

    const stored = await page.evaluate(() => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }) + location.href + document.cookie);
    expect(stored).not.toContain('test-token-0123456789abcdef');
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({ name: 'askrelay_session', httpOnly: true, sameSite: 'Strict' });
    expect(cookie.value).not.toContain('test-token-0123456789abcdef');
  });

  it('shows a new card live and answers a single choice with one click', async () => {
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
    const created = await createCard({
      title: 'Storage for <b>the</b> app',
      questions: [
        {
          header: 'Database',
          text: 'Which database should the service use?\n<img src=x>',
          options: [
            { label: 'PostgreSQL', description: 'What the other services use' },
            { label: 'SQLite', description: 'One file, no server' },
          ],
        },
      ],
    });
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    // Arrived over SSE: the page was not reloaded.
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42);

    expect(await card.getByTestId('question-header').textContent()).toBe('Database');
    // Card text is shown as text, never as markup.
    expect(await card.locator('.card-title').textContent()).toBe('Storage for <b>the</b> app');
    expect(await card.locator('.question-text').textContent()).toBe('Which database should the service use?\n<img src=x>');
    expect(await card.locator('b, img').count()).toBe(0);
    expect(await option(card, 'PostgreSQL').textContent()).toContain('What the other services use');
    expect(await option(card, 'SQLite').textContent()).toContain('One file, no server');
    expect(await card.getByTestId('free-text').isVisible()).toBe(true);
    expect(await card.getByTestId('countdown').textContent()).toMatch(/^(7h 59m|8h 0m) left$/);
    expect(await page.getByTestId('pending-count').textContent()).toBe('1');

    await option(card, 'PostgreSQL').click();
    expect(await statusOf(card, 'answered')).toBe('Answered: PostgreSQL');
    expect(await option(card, 'SQLite').isDisabled()).toBe(true);
    await expectAnswered(created.id, { q1: { selected: ['PostgreSQL'] } });
  });

  it('answers a multi-select question with check marks, typed text and Reply with selection', async () => {
    const created = await createCard({
      questions: [{ header: 'Services', text: 'Which services need a restart?', multiSelect: true, options: ['API', 'Worker', 'Cron', 'Web'] }],
    });
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    await option(card, 'Web').click();
    await option(card, 'Worker').click();
    await option(card, 'Cron').click();
    await option(card, 'Cron').click(); // unchecked again
    expect(await option(card, 'Worker').getAttribute('aria-pressed')).toBe('true');
    expect(await option(card, 'Cron').getAttribute('aria-pressed')).toBe('false');
    await card.getByTestId('free-text').fill('and flush the cache');
    expect(await card.getByTestId('reply').textContent()).toBe('Reply with selection');
    await card.getByTestId('reply').click();
    expect(await statusOf(card, 'answered')).toBe('Answered: Worker, Web + “and flush the cache”');
    await expectAnswered(created.id, { q1: { selected: ['Worker', 'Web'], text: 'and flush the cache' } });
  });

  it('lets a selectSeveral card switch a single-choice question to check marks', async () => {
    const created = await createCard({ selectSeveral: true, questions: [{ text: 'Which colours?', options: ['Red', 'Green', 'Blue'] }] });
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    expect(await option(card, 'Red').getAttribute('aria-pressed')).toBeNull();
    await card.getByText('Select several').click();
    await option(card, 'Red').click();
    await option(card, 'Blue').click();
    expect(await card.getAttribute('data-status')).toBe('pending');
    await card.getByRole('button', { name: 'Reply with selection' }).click();
    await statusOf(card, 'answered');
    await expectAnswered(created.id, { q1: { selected: ['Red', 'Blue'] } });
  });

  it('answers a free-text card, and shows a refused (credential) answer clearly', async () => {
    const created = await createCard({ questions: [{ text: 'Which cluster should the job run on?' }] });
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    expect(await card.getByTestId('option').count()).toBe(0);
    const box = card.getByTestId('free-text');
    await box.fill('password: hunter2hunter2');
    await box.press('Enter');
    await card.getByTestId('card-error').waitFor(WAIT);
    expect(await card.getByTestId('card-error').textContent()).toMatch(/credential/i);
    expect(await card.getAttribute('data-status')).toBe('pending');
    expect((await getCard(created.id)).status).toBe('pending');

    await box.fill('The staging cluster');
    await box.press('Enter');
    expect(await statusOf(card, 'answered')).toBe('Answered: “The staging cluster”');
    await expectAnswered(created.id, { q1: { selected: [], text: 'The staging cluster' } });
  });

  it('walks a three-question steps card with a stepper and submits once after the last', async () => {
    const created = await createCard({
      title: 'Release',
      questions: [
        { id: 'channel', header: 'Channel', text: 'Which channel?', options: ['Stable', 'Beta'] },
        { id: 'platforms', header: 'Platforms', text: 'Which platforms?', options: ['Linux', 'macOS', 'Windows'], multiSelect: true },
        { id: 'notes', header: 'Notes', text: 'Anything for the release notes?' },
      ],
    });
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    const stepper = card.getByTestId('stepper');
    expect(await stepper.textContent()).toContain('1 / 3');
    await option(card, 'Beta').click();
    expect(await stepper.textContent()).toContain('2 / 3');
    await option(card, 'Linux').click();
    await option(card, 'Windows').click();
    expect(await card.getByTestId('reply').textContent()).toBe('Next');
    await card.getByTestId('reply').click();
    expect(await stepper.textContent()).toContain('3 / 3');
    expect((await getCard(created.id)).status).toBe('pending'); // nothing sent before the last step

    // Back keeps what was picked.
    await card.getByTestId('back').click();
    expect(await stepper.textContent()).toContain('2 / 3');
    expect(await option(card, 'Windows').getAttribute('aria-pressed')).toBe('true');
    await card.getByTestId('reply').click();

    await card.getByTestId('free-text').fill('Faster start-up');
    expect(await card.getByTestId('reply').textContent()).toBe('Send');
    await card.getByTestId('reply').click();
    expect(await statusOf(card, 'answered')).toBe(
      'Answered: Channel: Beta; Platforms: Linux, Windows; Notes: “Faster start-up”',
    );
    await expectAnswered(created.id, {
      channel: { selected: ['Beta'] },
      platforms: { selected: ['Linux', 'Windows'] },
      notes: { selected: [], text: 'Faster start-up' },
    });
  });

  it('fills a form card: text, number, Yes/No, choice and choices, one Submit', async () => {
    const created = await createCard({
      layout: 'form',
      title: 'New project',
      questions: [
        { id: 'name', text: 'Project name', field: { type: 'string' } },
        { id: 'replicas', text: 'Replicas', field: { type: 'number' } },
        { id: 'public', text: 'Public repository?', field: { type: 'boolean' } },
        { id: 'region', text: 'Region', options: ['eu-west', 'us-east', 'ap-south'] },
        { id: 'checks', text: 'Checks to run', options: ['lint', 'test', 'e2e'], multiSelect: true },
      ],
    });
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    const field = (id: string) => card.locator(`[data-testid="field"][data-question-id="${id}"]`);

    // Submitting with empty fields is stopped on the page, naming the field.
    await card.getByTestId('submit').click();
    expect(await card.getByTestId('card-error').textContent()).toContain('Project name');

    await field('name').getByTestId('field-input').fill('askrelay');
    await field('replicas').getByTestId('field-input').fill('3');
    expect(await field('replicas').getByTestId('field-input').getAttribute('type')).toBe('number');
    await field('public').getByText('Yes').click();
    await field('region').getByText('us-east').click();
    await field('checks').getByText('lint').click();
    await field('checks').getByText('e2e').click();
    await card.getByTestId('submit').click();
    expect(await statusOf(card, 'answered')).toContain('Answered:');
    await expectAnswered(created.id, {
      name: { selected: [], text: 'askrelay' },
      replicas: { selected: [], text: '3' },
      public: { selected: ['Yes'] },
      region: { selected: ['us-east'] },
      checks: { selected: ['lint', 'e2e'] },
    });
  });

  it('skips a card', async () => {
    const created = await createCard({ questions: [{ text: 'Rename the branch?', options: ['Yes', 'No'] }] });
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    await card.getByTestId('skip').click();
    expect(await statusOf(card, 'skipped')).toBe('Skipped');
    expect((await getCard(created.id)).status).toBe('skipped');
  });

  it('counts down and turns a card to Expired when its wait runs out', async () => {
    const created = await createCard({ waitSeconds: 1, questions: [{ text: 'Quick one?', options: ['Yes', 'No'] }] });
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    expect(await card.getByTestId('countdown').textContent()).toMatch(/^(0s|1s) left$|Expiring/);
    expect(await statusOf(card, 'expired')).toMatch(/^Expired/);
    expect(await option(card, 'Yes').isDisabled()).toBe(true);
    expect((await getCard(created.id)).status).toBe('expired');
  });

  it('shows at once when a card is answered or cancelled elsewhere', async () => {
    const a = await createCard({ questions: [{ text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] });
    const b = await createCard({ questions: [{ text: 'Keep the logs?', options: ['Yes', 'No'] }] });
    await cardOn(a.id).waitFor(WAIT);
    await cardOn(b.id).waitFor(WAIT);

    const res = await relay.api(`/api/cards/${a.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['SQLite'] } } } });
    expect(res.status).toBe(200);
    expect(await statusOf(cardOn(a.id), 'answered')).toBe('Answered: SQLite');
    expect(await option(cardOn(a.id), 'PostgreSQL').isDisabled()).toBe(true);

    await relay.relay.cancel(b.id);
    expect(await statusOf(cardOn(b.id), 'cancelled')).toMatch(/^Cancelled/);
  });

  it('picks options with number keys on the focused card, else the first pending one', async () => {
    const first = await createCard({ questions: [{ text: 'Deploy now?', options: ['Now', 'Tonight', 'Tomorrow'] }] });
    const second = await createCard({ questions: [{ text: 'Notify the team?', options: ['Yes', 'No'] }] });
    await cardOn(first.id).waitFor(WAIT);
    await cardOn(second.id).waitFor(WAIT);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());

    // Nothing focused: the key goes to the first (oldest) pending card.
    await page.keyboard.press('2');
    expect(await statusOf(cardOn(first.id), 'answered')).toBe('Answered: Tonight');
    await expectAnswered(first.id, { q1: { selected: ['Tonight'] } });

    // Focusing another card sends the keys there.
    const third = await createCard({ questions: [{ text: 'Tag the release?', options: ['Yes', 'No'] }] });
    await cardOn(third.id).waitFor(WAIT);
    await cardOn(third.id).locator('.question-text').click();
    await page.keyboard.press('2');
    expect(await statusOf(cardOn(third.id), 'answered')).toBe('Answered: No');
    expect((await getCard(second.id)).status).toBe('pending');
    await page.keyboard.press('1'); // now the only pending card is the second
    expect(await statusOf(cardOn(second.id), 'answered')).toBe('Answered: Yes');
  });

  it('looks right with several cards (screenshot)', async () => {
    mkdirSync('test-artifacts', { recursive: true });
    // A fresh load shows only what is pending (and proves the list loads on start).
    await page.reload();
    await page.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
    expect(await page.locator('[data-testid="card"]').count()).toBe(0);
    expect(await page.getByTestId('empty').isVisible()).toBe(true);
    await createCard({
      title: 'Pick the storage for the new service',
      questions: [
        {
          header: 'Database',
          text: 'Which database should the orders service use?',
          options: [
            { label: 'PostgreSQL (Recommended)', description: 'Same as the other services; backups already set up' },
            { label: 'SQLite', description: 'One file, no server to run' },
            { label: 'DynamoDB', description: 'Managed, but new to the team' },
          ],
        },
      ],
    });
    await createCard({
      title: 'Release checklist',
      questions: [
        { header: 'Checks', text: 'Which checks should run before the release?', multiSelect: true, options: ['Unit tests', 'End-to-end tests', 'Load test'] },
        { header: 'Channel', text: 'Which channel?', options: ['Stable', 'Beta'] },
        { header: 'Notes', text: 'Anything for the notes?' },
      ],
    });
    const multi = await createCard({ selectSeveral: true, questions: [{ text: 'Which logs should be kept?', options: ['Access logs', 'Error logs', 'Debug logs'] }] });
    await createCard({
      layout: 'form',
      title: 'New project',
      questions: [
        { id: 'name', text: 'Project name', field: { type: 'string' } },
        { id: 'replicas', text: 'Replicas', field: { type: 'number' } },
        { id: 'public', text: 'Public repository?', field: { type: 'boolean' } },
        { id: 'region', text: 'Region', options: ['eu-west', 'us-east'] },
      ],
    });
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="card"][data-status="pending"]').length === 4, null, WAIT);
    await cardOn(multi.id).getByText('Select several').click();
    await option(cardOn(multi.id), 'Error logs').click();
    await page.evaluate(() => {
      (document.activeElement as HTMLElement | null)?.blur();
      window.scrollTo(0, 0);
    });
    await page.waitForTimeout(300); // let the arrival animation settle
    await page.screenshot({ path: 'test-artifacts/web-page.png', fullPage: true });

    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: 'test-artifacts/web-page-dark.png', fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: 'test-artifacts/web-page-phone.png', fullPage: true });
    await page.setViewportSize({ width: 900, height: 1100 });
  });

  it('signs out and asks for the token again', async () => {
    await page.getByTestId('logout').click();
    await page.getByTestId('login').waitFor(WAIT);
    expect(await page.getByTestId('board').isHidden()).toBe(true);
    expect((await page.request.get(new URL('/api/cards', relay.url).href)).status()).toBe(401);
    expect(pageErrors).toEqual([]);
  });
});
