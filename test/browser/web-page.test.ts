import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { BOARD_CARDS } from '../support/board-cards.js';
import { startRelayWithClock, startTestRelay, type TestRelay } from '../support/running-relay.js';
import { collectPageErrors, launchChromium, newContext } from './chromium.js';

// The web page against a real relay in a real browser: cards arrive over SSE, every
// answer made on the page is checked through the API. What the page looks like is asserted
// through the DOM; the pictures are taken by scripts/screenshots.ts (npm run screenshots).

const WAIT = { timeout: 5000 };

let relay: TestRelay;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  [relay, browser] = await Promise.all([startTestRelay(), launchChromium()]);
  context = await newContext(browser, { viewport: { width: 900, height: 1100 } });
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

/** A new page of `context`, signed in to `target` and live; `before` runs first (a fake clock). */
async function signedIn(context: BrowserContext, target: TestRelay, before?: (p: Page) => Promise<unknown>): Promise<Page> {
  const p = await context.newPage();
  collectPageErrors(p, pageErrors);
  await before?.(p);
  await p.goto(target.url);
  await p.getByTestId('token-input').fill(target.token);
  await p.getByTestId('token-input').press('Enter');
  await p.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
  return p;
}

/** The four cards of the layout test (the ones scripts/screenshots.ts pictures), made in order. */
async function createSeveralCards() {
  const made: Partial<Record<keyof typeof BOARD_CARDS, Card>> = {};
  for (const [name, input] of Object.entries(BOARD_CARDS)) made[name as keyof typeof BOARD_CARDS] = await createCard(input);
  return made as Record<keyof typeof BOARD_CARDS, Card>;
}

/** Sum of an rgb()/rgba() colour's channels: 0 is black, 765 white. */
const brightness = (rgb: string) => rgb.match(/\d+/g)!.slice(0, 3).reduce((sum, n) => sum + Number(n), 0);

const boxesOf = (els: Element[]) =>
  els.map((el) => {
    const r = el.getBoundingClientRect();
    return { top: r.top + window.scrollY, bottom: r.bottom + window.scrollY, left: r.left, right: r.right, width: r.width };
  });

/** The pending cards lie one under another inside the page's width, and the page does not scroll sideways. */
async function expectStacked(p: Page, width: number) {
  expect(await p.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
  const boxes = await p.locator('[data-testid="card"][data-status="pending"]').evaluateAll(boxesOf);
  expect(boxes).toHaveLength(4);
  for (const [i, box] of boxes.entries()) {
    expect(box.left).toBeGreaterThanOrEqual(0);
    expect(box.right).toBeLessThanOrEqual(width);
    expect(box.width).toBeGreaterThan(width / 2);
    if (i > 0) expect(box.top).toBeGreaterThanOrEqual(boxes[i - 1].bottom);
  }
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

  it('renders an agent’s markdown safely: code in monospace that scrolls sideways, emphasis, lists, links in a new tab, no raw HTML, no outside image', async () => {
    const outside: string[] = [];
    const notOurs = (r: { url(): string }) => {
      if (!r.url().startsWith(relay.url)) outside.push(r.url());
    };
    page.on('request', notOurs);
    const created = await createCard({
      title: 'Migrate `orders` **now**?',
      questions: [
        {
          text: [
            'The migration runs `ALTER TABLE` on *orders*:',
            '',
            '```sql',
            `ALTER TABLE orders ADD COLUMN shipped_at timestamptz NULL, ADD COLUMN carrier text NULL, ADD COLUMN ${'x'.repeat(200)} int;`,
            '```',
            '',
            '- takes a lock',
            '- [the plan](https://example.com/plan) and [a trap](javascript:alert(1))',
            '',
            '<img src="https://tracker.example/pixel.png"> ![pixel](https://tracker.example/pixel2.png) <script>alert(1)</script>',
          ].join('\n'),
          options: [{ label: 'Run it', description: 'after the `pg_dump`' }, 'Not now'],
        },
      ],
    });
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    const text = card.getByTestId('question-text');
    expect(await card.locator('.card-title code').textContent()).toBe('orders');
    expect(await card.locator('.card-title strong').textContent()).toBe('now');
    expect(await text.locator('em').textContent()).toBe('orders');
    expect(await text.locator('li').allTextContents()).toEqual(['takes a lock', 'the plan and [a trap](javascript:alert(1))']);
    const pre = text.locator('pre');
    const style = await pre.evaluate((el) => ({ font: getComputedStyle(el.querySelector('code')!).fontFamily, overflow: getComputedStyle(el).overflowX, scrolls: el.scrollWidth > el.clientWidth, inside: el.getBoundingClientRect().right <= el.closest('[data-testid="card"]')!.getBoundingClientRect().right }));
    expect(style.font).toMatch(/mono/i);
    expect(style).toMatchObject({ overflow: 'auto', scrolls: true, inside: true });
    const links = await text.locator('a').evaluateAll((els) => els.map((a) => ({ href: a.getAttribute('href'), target: a.getAttribute('target'), rel: a.getAttribute('rel') })));
    expect(links).toContainEqual({ href: 'https://example.com/plan', target: '_blank', rel: 'noopener noreferrer' });
    expect(links.some((l) => l.href?.startsWith('javascript'))).toBe(false);
    expect(await card.locator('img, script').count()).toBe(0);
    expect(await text.textContent()).toContain('<img src="https://tracker.example/pixel.png">');
    expect(await card.locator('[data-testid="option"][data-label="Run it"] .option-desc code').textContent()).toBe('pg_dump');
    page.off('request', notOurs);
    expect(outside).toEqual([]);
    await card.getByTestId('skip').click();
    await statusOf(card, 'skipped');
  });

  it('numbers every option, past nine, with its badge on the left', async () => {
    const labels = Array.from({ length: 12 }, (_, i) => `Region ${i + 1}`);
    const created = await createCard({ questions: [{ text: 'Which region?', options: labels }] });
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    expect(await card.locator('[data-testid="option"] .key').allTextContents()).toEqual(labels.map((_, i) => String(i + 1)));
    const sides = await card.locator('[data-testid="option"]').first().evaluate((el) => ({
      key: el.querySelector('.key')!.getBoundingClientRect().left,
      label: el.querySelector('.option-label')!.getBoundingClientRect().left,
    }));
    expect(sides.key).toBeLessThan(sides.label);
    await card.getByTestId('skip').click();
    await statusOf(card, 'skipped');
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
    // The relay's clock and the page's move only when the test says, together.
    const { relay: own, clock } = await startRelayWithClock();
    const ownContext = await newContext(browser, { viewport: { width: 900, height: 1100 } });
    try {
      const p = await signedIn(ownContext, own, (p) => p.clock.setFixedTime(clock.now()));

      const res = await own.api('/api/cards', { method: 'POST', json: { waitSeconds: 90, questions: [{ text: 'Quick one?', options: ['Yes', 'No'] }] } });
      expect(res.status).toBe(201);
      const created = (await res.json()) as Card;
      const card = p.locator(`[data-testid="card"][data-card-id="${created.id}"]`);
      await card.waitFor(WAIT);
      const countdown = card.getByTestId('countdown');
      expect(await countdown.textContent()).toBe('1m 30s left');
      expect(await countdown.getAttribute('class')).not.toMatch(/\bsoon\b/);

      // A minute on, the page's next tick shows half a minute left, marked as soon.
      await p.clock.setFixedTime(clock.now() + 60_000);
      await p.waitForFunction((id) => document.querySelector(`[data-card-id="${id}"] [data-testid="countdown"]`)?.textContent === '30s left', created.id, WAIT);
      expect(await countdown.getAttribute('class')).toMatch(/\bsoon\b/);
      expect(await card.getAttribute('data-status')).toBe('pending');

      // The wait runs out on the relay: it closes the card and the page shows it.
      await p.clock.setFixedTime(clock.now() + 90_000);
      clock.advance(90_000);
      await p.waitForSelector(`[data-testid="card"][data-card-id="${created.id}"][data-status="expired"]`, WAIT);
      expect(await card.getByTestId('card-status').textContent()).toMatch(/^Expired/);
      expect(await card.locator('[data-testid="option"][data-label="Yes"]').isDisabled()).toBe(true);
      expect((await (await own.api(`/api/cards/${created.id}`)).json()).status).toBe('expired');
    } finally {
      await ownContext.close();
      await own.stop();
    }
  });

  it('makes an outage obvious, and an answer given meanwhile waits queued (kept in the browser) and is sent once, when the relay is back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'askrelay-outage-'));
    let own = await startTestRelay({}, dir);
    const port = new URL(own.url).port;
    const ownContext = await newContext(browser, { viewport: { width: 900, height: 1100 } });
    try {
      const p = await signedIn(ownContext, own);
      expect(await p.getByTestId('outage').isHidden()).toBe(true);
      const res = await own.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Restart the workers?', options: ['Yes', 'No'] }] } });
      const created = (await res.json()) as Card;
      const card = p.locator(`[data-testid="card"][data-card-id="${created.id}"]`);
      await card.waitFor(WAIT);
      const yes = card.locator('[data-testid="option"][data-label="Yes"]');

      await own.stop(); // the folder stays: the same relay comes back on it
      await p.getByTestId('outage').waitFor({ timeout: 30_000 });
      expect(await p.getByTestId('outage').textContent()).toBe('The relay is unreachable — reconnecting… Answers you give meanwhile are queued and sent once it is back.');
      // The buttons still work: the answer is queued on the card and kept in this browser.
      await yes.click();
      await p.waitForSelector(`[data-testid="card"][data-card-id="${created.id}"][data-delivery="queued"]`, WAIT);
      expect(await card.getByTestId('undo-bar').innerText()).toBe('Queued: Yes, sent once the relay is back');
      expect(await card.getByTestId('card-error').isHidden()).toBe(true);
      const kept = await p.evaluate(() => JSON.parse(localStorage.getItem('askrelay.outbox') ?? '[]'));
      expect(kept).toMatchObject([{ cardId: created.id, action: 'answer', json: { answers: { q1: { selected: ['Yes'] } } } }]);

      own = await startTestRelay({}, dir, port);
      await p.waitForSelector('[data-testid="connection"][data-state="live"]', { timeout: 30_000 });
      expect(await p.getByTestId('outage').isHidden()).toBe(true);
      await p.waitForSelector(`[data-testid="card"][data-card-id="${created.id}"][data-status="answered"]`, WAIT);
      expect((await (await own.api(`/api/cards/${created.id}`)).json()).answer).toEqual({ q1: { selected: ['Yes'] } });
      expect(await p.evaluate(() => localStorage.getItem('askrelay.outbox'))).toBe('[]');
      // The board's last card is closing in place: "Nothing is waiting" does not show above it.
      expect(await p.getByTestId('empty').isHidden()).toBe(true);
    } finally {
      await ownContext.close();
      await own.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('clears a form field’s error once the field is filled, and numbers the fields down the form', async () => {
    const created = await createCard({
      layout: 'form',
      questions: [
        { id: 'name', header: 'Name', text: 'Project name', field: { type: 'string' } },
        { id: 'region', header: 'Region', text: 'Region', options: ['eu-west', 'us-east'] },
      ],
    });
    const card = cardOn(created.id);
    await card.waitFor(WAIT);
    const field = (id: string) => card.locator(`[data-testid="field"][data-question-id="${id}"]`);
    // Fields are numbered down the form, each on its left.
    expect(await card.getByTestId('field-key').allTextContents()).toEqual(['1', '2']);
    await field('name').getByTestId('field-input').fill('askrelay');
    await card.getByTestId('submit').click();
    expect(await card.getByTestId('card-error').textContent()).toContain('Region');
    expect(await field('region').getAttribute('class')).toMatch(/\binvalid\b/);
    await field('region').getByText('us-east').click();
    expect(await field('region').getAttribute('class')).not.toMatch(/\binvalid\b/);
    expect(await card.getByTestId('card-error').isHidden()).toBe(true);
    // Number keys on the selected form go to a field by its number.
    await card.locator('.card-head').click();
    await page.keyboard.press('1');
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).name)).toBe('name');
    await card.getByTestId('submit').click();
    expect(await statusOf(card, 'answered')).toContain('Answered:');
    await expectAnswered(created.id, { name: { selected: [], text: 'askrelay' }, region: { selected: ['us-east'] } });
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

  it('number keys answer only the card the human selected, never one nobody picked', async () => {
    const first = await createCard({ questions: [{ text: 'Deploy now?', options: ['Now', 'Tonight', 'Tomorrow'] }] });
    const second = await createCard({ questions: [{ text: 'Notify the team?', options: ['Yes', 'No'] }] });
    await cardOn(first.id).waitFor(WAIT);
    await cardOn(second.id).waitFor(WAIT);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.mouse.click(5, 300); // a click beside the cards selects none
    expect(await page.locator('[data-testid="card"].kbd-target').count()).toBe(0);

    // Nothing selected: the key answers nothing, and the hint says how to select a card.
    await page.keyboard.press('2');
    await page.waitForFunction(() => document.querySelector('[data-testid="key-hint"]')?.textContent?.startsWith('No card is selected'), null, WAIT);
    expect((await getCard(first.id)).status).toBe('pending');
    expect((await getCard(second.id)).status).toBe('pending');

    // Clicking a card selects it, visibly; the keys go there.
    await cardOn(first.id).locator('.question-text').click();
    expect(await cardOn(first.id).getAttribute('class')).toMatch(/\bkbd-target\b/);
    expect(await cardOn(first.id).getAttribute('aria-current')).toBe('true');
    await page.keyboard.press('2');
    expect(await statusOf(cardOn(first.id), 'answered')).toBe('Answered: Tonight');
    await expectAnswered(first.id, { q1: { selected: ['Tonight'] } });

    // The answered card is no longer selected and the other one was never picked: a key does nothing.
    expect(await page.locator('[data-testid="card"].kbd-target').count()).toBe(0);
    await page.evaluate(() => document.querySelector('[data-testid="key-hint"]')!.textContent = '');
    await page.keyboard.press('1');
    await page.waitForFunction(() => document.querySelector('[data-testid="key-hint"]')?.textContent?.startsWith('No card is selected'), null, WAIT);
    expect((await getCard(second.id)).status).toBe('pending');

    // Tabbing to a card selects it as clicking does.
    await cardOn(second.id).getByTestId('option').first().focus();
    await page.keyboard.press('1');
    expect(await statusOf(cardOn(second.id), 'answered')).toBe('Answered: Yes');
    await expectAnswered(second.id, { q1: { selected: ['Yes'] } });
  });

  it('holds an answer for the undo window: Undo puts the card back, and nothing reaches the relay until it is sent', async () => {
    // The page's own default (5 s), on a clock the test moves.
    const own = await browser.newContext({ viewport: { width: 900, height: 1100 } });
    try {
      const p = await signedIn(own, relay, (p) => p.clock.install());
      expect(await p.getByTestId('undo-seconds').inputValue()).toBe('5');

      const created = await createCard({ questions: [{ text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] });
      const card = p.locator(`[data-testid="card"][data-card-id="${created.id}"]`);
      await card.waitFor(WAIT);
      await card.locator('[data-testid="option"][data-label="SQLite"]').click();
      expect(await card.getByTestId('undo-bar').innerText()).toBe('Answered: SQLite · Undo');
      expect(await card.locator('[data-testid="option"][data-label="PostgreSQL"]').isDisabled()).toBe(true);
      expect(await card.getAttribute('data-status')).toBe('pending');
      expect((await getCard(created.id)).status).toBe('pending');

      // Undo: the card is as it was, and the relay never heard of the answer.
      await card.getByTestId('undo').click();
      expect(await card.getByTestId('undo-bar').isHidden()).toBe(true);
      expect(await card.locator('[data-testid="option"][data-label="PostgreSQL"]').isEnabled()).toBe(true);
      await p.clock.runFor(10_000);
      expect((await getCard(created.id)).status).toBe('pending');

      // Answered again, and left alone: sent when the window ends, not before.
      await card.locator('[data-testid="option"][data-label="PostgreSQL"]').click();
      await p.clock.runFor(4_000);
      expect((await getCard(created.id)).status).toBe('pending');
      await p.clock.runFor(1_000);
      await p.waitForSelector(`[data-testid="card"][data-card-id="${created.id}"][data-status="answered"]`, WAIT);
      expect(await card.getByTestId('card-status').textContent()).toBe('Answered: PostgreSQL');
      await expectAnswered(created.id, { q1: { selected: ['PostgreSQL'] } });

      // Answered elsewhere during the window: the held answer is dropped, the other one stands.
      const raced = await createCard({ questions: [{ text: 'Keep the logs?', options: ['Yes', 'No'] }] });
      const racedCard = p.locator(`[data-testid="card"][data-card-id="${raced.id}"]`);
      await racedCard.waitFor(WAIT);
      await racedCard.getByTestId('skip').click();
      expect(await racedCard.getByTestId('undo-bar').innerText()).toBe('Skipped · Undo');
      await relay.api(`/api/cards/${raced.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['No'] } } } });
      await p.waitForSelector(`[data-testid="card"][data-card-id="${raced.id}"][data-status="answered"]`, WAIT);
      expect(await racedCard.getByTestId('undo-bar').isHidden()).toBe(true);
      await p.clock.runFor(10_000);
      expect(await racedCard.getByTestId('card-error').isHidden()).toBe(true);
      expect((await getCard(raced.id)).answer).toEqual({ q1: { selected: ['No'] } });

      // A tab closed or reloaded during the window still sends what it held.
      const left = await createCard({ questions: [{ text: 'Tag the release?', options: ['Yes', 'No'] }] });
      const leftCard = p.locator(`[data-testid="card"][data-card-id="${left.id}"]`);
      await leftCard.waitFor(WAIT);
      await leftCard.locator('[data-testid="option"][data-label="Yes"]').click();
      await leftCard.getByTestId('undo-bar').waitFor(WAIT);
      await p.reload();
      await expect.poll(async () => (await getCard(left.id)).status, WAIT).toBe('answered');
      await expectAnswered(left.id, { q1: { selected: ['Yes'] } });

      // Off (0): the next answer goes at once, and the choice stays in this browser.
      await p.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
      await p.getByTestId('undo-seconds').selectOption('0');
      await p.reload();
      await p.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
      expect(await p.getByTestId('undo-seconds').inputValue()).toBe('0');
      const now = await createCard({ questions: [{ text: 'Ship it?', options: ['Yes', 'No'] }] });
      await p.locator(`[data-testid="card"][data-card-id="${now.id}"] [data-testid="option"][data-label="No"]`).click();
      await p.waitForSelector(`[data-testid="card"][data-card-id="${now.id}"][data-status="answered"]`, WAIT);
      await expectAnswered(now.id, { q1: { selected: ['No'] } });
    } finally {
      await own.close();
    }
  });

  it('lays out several cards at desktop and phone widths, light and dark', async () => {
    // A fresh load shows only what is pending (and proves the list loads on start).
    await page.reload();
    await page.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
    expect(await page.locator('[data-testid="card"]').count()).toBe(0);
    expect(await page.getByTestId('empty').isVisible()).toBe(true);
    const cards = await createSeveralCards();
    await page.waitForFunction(() => document.querySelectorAll('[data-testid="card"][data-status="pending"]').length === 4, null, WAIT);
    expect(await page.getByTestId('empty').isHidden()).toBe(true);
    expect(await page.getByTestId('pending-count').textContent()).toBe('4');
    const multi = cardOn(cards.multi.id);
    await multi.getByText('Select several').click();
    await option(multi, 'Error logs').click();
    expect(await option(multi, 'Error logs').getAttribute('aria-pressed')).toBe('true');
    expect(await option(multi, 'Access logs').getAttribute('aria-pressed')).toBe('false');
    // Every option shows its description; the form shows a field for each question.
    expect(await option(cardOn(cards.storage.id), 'DynamoDB').innerText()).toContain('Managed, but new to the team');
    expect(await cardOn(cards.form.id).getByTestId('field').count()).toBe(4);

    // Desktop: the cards stack without overlapping, and nothing scrolls sideways.
    await expectStacked(page, 900);
    // The pictures in docs/web-page.md and docs/surfaces.md (copied from test-artifacts/),
    // from the top and with the page's default undo window, as a new user sees it.
    await page.getByTestId('undo-seconds').selectOption('5');
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: 'test-artifacts/web-page-desktop.png', fullPage: true });
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const cardColours = () =>
      cardOn(cards.storage.id).evaluate((el) => ({ background: getComputedStyle(el).backgroundColor, text: getComputedStyle(el.querySelector('.question-text')!).color }));
    const light = { page: await background(), card: await cardColours() };

    // Dark: the page follows the system's colour scheme, and a card's text stays readable.
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForFunction((before) => getComputedStyle(document.body).backgroundColor !== before, light.page, WAIT);
    // Colours change with a transition: read them once it has ended.
    await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running'), null, WAIT);
    const dark = { page: await background(), card: await cardColours() };
    expect(brightness(dark.page)).toBeLessThan(brightness(light.page));
    expect(brightness(dark.card.background)).toBeLessThan(brightness(light.card.background));
    expect(brightness(dark.card.text)).toBeGreaterThan(brightness(dark.card.background) + 200);
    expect(brightness(light.card.text)).toBeLessThan(brightness(light.card.background) - 200);
    await page.emulateMedia({ colorScheme: 'light' });

    // A phone: every card, option and field fits the screen's width.
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await expectStacked(page, 390);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: 'test-artifacts/web-page-phone.png' });
      await page.getByTestId('undo-seconds').selectOption('0');
      for (const box of await page.locator('[data-testid="card"] [data-testid="option"], [data-testid="card"] [data-testid="field"]').evaluateAll(boxesOf)) {
        expect(box.left).toBeGreaterThanOrEqual(0);
        expect(box.right).toBeLessThanOrEqual(390);
      }
    } finally {
      await page.setViewportSize({ width: 900, height: 1100 });
    }
  });

  it('on a phone: a one-row header, a long question collapsed with Show all, and Recent one tap away saying who answered and when', async () => {
    const own = await newContext(browser, { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    try {
      const p = await signedIn(own, relay, (p) => p.clock.install());

      // The sticky header is one row, about 56 px: brand mark, tabs, the connection's dot, short labels.
      const header = await p.locator('.topbar-inner').boundingBox();
      expect(header!.height).toBeLessThanOrEqual(60);
      const tops = await p.locator('.brand-mark, [data-testid="tab-cards"], [data-testid="tab-sessions"], [data-testid="logout"]').evaluateAll((els) =>
        els.map((el) => { const r = el.getBoundingClientRect(); return r.top + r.height / 2; }));
      expect(Math.max(...tops) - Math.min(...tops)).toBeLessThan(8);
      expect(await p.evaluate(() => document.documentElement.scrollWidth <= 390)).toBe(true);

      const long = Array.from({ length: 30 }, (_, i) => `Line ${i + 1}: what the migration does to table ${i + 1}.`).join('\n');
      const tall = await createCard({ questions: [{ text: long, options: ['Run it', 'Not now'] }] });
      const short = await createCard({ questions: [{ text: 'Tag the release?', options: ['Yes', 'No'] }] });
      const tallCard = p.locator(`[data-testid="card"][data-card-id="${tall.id}"]`);
      const shortCard = p.locator(`[data-testid="card"][data-card-id="${short.id}"]`);
      await shortCard.waitFor(WAIT);
      const text = tallCard.getByTestId('question-text');
      await tallCard.getByTestId('show-all').waitFor(WAIT);
      const collapsed = (await text.boundingBox())!.height;
      expect(collapsed).toBeLessThan(200);
      expect(await shortCard.getByTestId('show-all').isHidden()).toBe(true); // a short question is whole
      await tallCard.getByTestId('show-all').click();
      expect((await text.boundingBox())!.height).toBeGreaterThan(collapsed * 3);
      expect(await tallCard.getByTestId('show-all').textContent()).toBe('Show less');

      // Cards still waiting below keep Recent out of sight, until the link at the top is used.
      const fillers = [];
      for (let i = 0; i < 3; i++) fillers.push(await createCard({ questions: [{ text: `Filler ${i + 1}?`, options: ['Yes', 'No'] }] }));
      // Answered here and through the API: a moment later both settle into Recent, which the top links to.
      await shortCard.locator('[data-testid="option"][data-label="Yes"]').click();
      await p.waitForSelector(`[data-testid="card"][data-card-id="${short.id}"][data-status="answered"]`, WAIT);
      await relay.api(`/api/cards/${tall.id}/skip`, { method: 'POST' });
      await p.waitForSelector(`[data-testid="card"][data-card-id="${tall.id}"][data-status="skipped"]`, WAIT);
      await p.clock.runFor(7000);
      await p.waitForSelector(`[data-testid="recent-cards"] [data-card-id="${tall.id}"]`, WAIT);
      expect(await p.getByTestId('recent-link').textContent()).toBe('Recent (2) ↓');
      const recentTop = () => p.getByTestId('recent').evaluate((el) => el.getBoundingClientRect().top);
      // Seen from the top of the page (the clicks above scrolled it, and Chromium 156 keeps the
      // page scrolled to its end as the cards above settle into Recent).
      await p.evaluate(() => window.scrollTo(0, 0));
      expect(await recentTop()).toBeGreaterThan(844);
      await p.getByTestId('recent-link').click();
      // In view, below the sticky header (as far up as the end of the page lets it come).
      await p.waitForFunction(() => {
        const r = document.querySelector('[data-testid="recent"]')!.getBoundingClientRect();
        return r.top >= 56 && r.bottom <= window.innerHeight;
      }, null, WAIT);
      const by = (id: string) => p.locator(`[data-testid="recent-cards"] [data-card-id="${id}"] [data-testid="closed-by"]`).textContent();
      expect(await by(short.id)).toMatch(/^answered by you on the page, \d{1,2}:\d{2}/);
      expect(await by(tall.id)).toMatch(/^skipped by you through the API, \d{1,2}:\d{2}/);
      for (const filler of fillers) await relay.api(`/api/cards/${filler.id}/skip`, { method: 'POST' });
    } finally {
      await own.close();
    }
  });

  it('signs out and asks for the token again', async () => {
    await page.getByTestId('logout').click();
    await page.getByTestId('login').waitFor(WAIT);
    expect(await page.getByTestId('board').isHidden()).toBe(true);
    expect((await page.request.get(new URL('/api/cards', relay.url).href)).status()).toBe(401);
    expect(pageErrors).toEqual([]);
  });
});
