import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import {
  lastToolResult,
  lastUserText,
  startAnthropicServer,
  type AnthropicServer,
  type MessagesRequest,
  type ScriptedReply,
} from '../fakes/anthropic-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { fetchSession, sessionApi } from '../support/session-api.js';
import { collectPageErrors, launchChromium, newContext } from './chromium.js';

// The Sessions view against a real relay running real sessions: the `messages` engine
// (the real @anthropic-ai/sdk client) talks to the scripted Anthropic server, the card it
// asks is answered on the page, and the transcript follows live over SSE. Each test has its own
// relay and browser context and starts the sessions it needs, so any one of them runs alone.
// The screenshots of these views are taken by scripts/screenshots.ts (npm run screenshots),
// not here: a picture nobody compares is not a check.

const WAIT = { timeout: 8000 };
const PROMPT = 'Set up the storage for the orders service.';
const QUESTION = 'Which database should the orders service use?';
const NEXT = 'Add an index on orders.created_at.';
const BAD_MODEL = 'claude-nonexistent';
const TOOL_RESULT = `Your questions have been answered: "${QUESTION}"="PostgreSQL (Recommended)". You can now continue with these answers in mind.`;
const REPLY = 'PostgreSQL it is. I created the orders schema and its first migration.';
const SLOW = 'Think the migration plan over.';

/** A promise and its resolve (Node 20 has no Promise.withResolvers). */
function gate(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** The SLOW prompt's reply is held until the test resolves this. */
let slowReply = gate();

async function model(request: MessagesRequest): Promise<ScriptedReply> {
  if (request.model === BAD_MODEL) {
    return { error: { status: 400, type: 'invalid_request_error', message: `model: unknown model "${BAD_MODEL}"` } };
  }
  const text = lastUserText(request);
  if (text === PROMPT) {
    return {
      text: 'Before I start: one choice is yours.',
      toolUse: {
        name: 'AskUserQuestion',
        input: {
          questions: [
            {
              question: QUESTION,
              header: 'Database',
              multiSelect: false,
              options: [
                { label: 'PostgreSQL (Recommended)', description: 'Same as the other services' },
                { label: 'SQLite', description: 'One file, no server' },
              ],
            },
          ],
        },
      },
    };
  }
  if (text === SLOW) {
    await slowReply.promise; // silent, longer than ASKRELAY_STUCK_AFTER, until the test lets it answer
    return { text: 'Plan: add the column, backfill, then switch reads.' };
  }
  if (!text && lastToolResult(request)) return { text: REPLY };
  return { text: `Done: ${text.replace(/^Add/, 'added').replace(/\.$/, '')}, and the tests pass.` };
}

let fake: AnthropicServer;
let relay: TestRelay;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let pageErrors: string[] = [];

const watch = (p: Page) => collectPageErrors(p, pageErrors);
const api = sessionApi(() => relay);

beforeAll(async () => {
  [fake, browser] = await Promise.all([startAnthropicServer({ model }), launchChromium()]);
});

afterAll(async () => {
  await browser?.close();
  await fake?.close();
});

beforeEach(async () => {
  slowReply = gate();
  pageErrors = [];
  relay = await startTestRelay({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h', ASKRELAY_STUCK_AFTER: '600ms' });
  context = await newContext(browser, { viewport: { width: 900, height: 1000 } });
  page = await context.newPage();
  watch(page);
});

afterEach(async () => {
  slowReply.resolve(); // a held reply must not keep the relay from stopping
  await context?.close();
  await relay?.stop();
  expect(pageErrors).toEqual([]);
});

const apiSession = (id: string) => fetchSession(relay, id);

const row = (p: Page, id: string): Locator => p.locator(`[data-testid="session"][data-session-id="${id}"]`);
const view = (p: Page, status?: string): Locator =>
  p.locator(`[data-testid="session-detail"] .session-view${status ? `[data-status="${status}"]` : ''}`);
const entries = (p: Page, role?: string): Locator =>
  p.locator(`[data-testid="transcript"] [data-testid="entry"]${role ? `[data-role="${role}"]` : ''}`);

/** Signs `p` in with the token and waits for the live connection. */
async function signIn(p: Page, hash = ''): Promise<void> {
  await p.goto(`${relay.url}${hash}`);
  await p.getByTestId('token-input').fill('test-token-0123456789abcdef');
  await p.getByTestId('token-input').press('Enter');
  await p.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
}

/** A second signed-in tab of the same browser context (the token is kept there). */
async function secondTab(hash: string): Promise<Page> {
  const p = await context.newPage();
  watch(p);
  await p.goto(`${relay.url}${hash}`);
  return p;
}

/** Waits for the new-session form with the relay's providers in it (GET /api/providers). */
async function formReady(p: Page): Promise<void> {
  await p.locator('[data-testid="new-session-form"][data-state="ready"]').waitFor(WAIT);
}

async function openSessions(p: Page): Promise<void> {
  await p.getByTestId('tab-sessions').click();
  await p.getByTestId('sessions').waitFor(WAIT);
}

/** Starts a session through the API (as another surface would) and returns its id. */
async function startSession(prompt: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt, ...extra } });
  expect(res.status).toBe(201);
  return ((await res.json()) as Session).id;
}

/** A session waiting on its AskUserQuestion card. */
async function waitingSession(): Promise<{ id: string; card: Card }> {
  const id = await startSession(PROMPT, { agentsMayAnswer: true });
  const card = await api.pendingCard(id);
  await api.status(id, 'waiting');
  return { id, card };
}

/** A session idle after one plain reply. */
async function idleSession(prompt = 'Write the README.'): Promise<string> {
  const id = await startSession(prompt);
  await api.done(id);
  return id;
}

async function answer(card: Card, label: string): Promise<void> {
  const res = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { [card.questions[0].id]: { selected: [label] } } } });
  expect(res.status).toBe(200);
}

/** True when the page is no wider than its viewport (nothing pushes it sideways). */
const noSidewaysScroll = (p: Page) => p.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

describe('sessions on the web page', () => {
  it('signs in and shows the Sessions view, empty', async () => {
    await signIn(page);
    expect(await page.getByTestId('board').isVisible()).toBe(true); // Cards stays the main view
    await openSessions(page);
    expect(await page.getByTestId('board').isHidden()).toBe(true);
    expect(await page.getByTestId('sessions-empty').isVisible()).toBe(true);
  });

  it('offers each provider its engines, and the ask_user variant only for the extension engine', async () => {
    await signIn(page);
    await openSessions(page);
    await page.getByTestId('new-session').click();
    await formReady(page);
    const provider = page.getByTestId('session-provider');
    const engine = page.getByTestId('session-engine');
    const variant = page.getByTestId('session-ask-user-variant');
    const engines = () => engine.locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));

    // The relay's providers, as GET /api/providers names them.
    expect(await provider.locator('option').evaluateAll((os) => os.map((o) => [(o as HTMLOptionElement).value, o.textContent]))).toEqual([
      ['claude', 'Claude'],
      ['deepseek', 'DeepSeek'],
      ['copilot', 'GitHub Copilot'],
      ['openai', 'OpenAI'],
      ['grok', 'Grok'],
      ['codex', 'Codex'],
      ['gemini', 'Gemini CLI'],
    ]);
    expect(await provider.inputValue()).toBe('claude');
    expect(await engines()).toEqual(['code', 'messages']);
    expect(await engine.inputValue()).toBe('code');
    expect(await variant.isHidden()).toBe(true);

    await provider.selectOption('copilot');
    expect(await engines()).toEqual(['sdk', 'extension']);
    expect(await engine.inputValue()).toBe('sdk'); // the provider's default
    expect(await page.getByTestId('session-engine-hint').textContent()).toMatch(/askrelay’s ask_user/);
    expect(await variant.isHidden()).toBe(true);
    await engine.selectOption('extension');
    expect(await variant.isVisible()).toBe(true);
    expect(await variant.inputValue()).toBe('classic');
    await provider.selectOption('openai'); // the same engines: the choice stays
    expect(await engine.inputValue()).toBe('extension');
    await variant.selectOption('form');
    await page.getByTestId('session-prompt').fill('Tidy up the release notes.');

    // What the form sends (the relay's answer is stubbed: no OpenAI session runs here).
    let sent: unknown;
    await page.route('**/api/sessions', (route) => {
      sent = route.request().postDataJSON();
      void route.fulfill({ status: 422, json: { error: { code: 'stubbed', message: 'Stubbed by the test.' } } });
    });
    await page.getByTestId('start-session').click();
    await page.getByTestId('new-session-error').waitFor(WAIT);
    await page.unroute('**/api/sessions');
    expect(sent).toMatchObject({ provider: 'openai', engine: 'extension', askUserVariant: 'form' });

    await provider.selectOption('deepseek');
    expect(await engines()).toEqual(['code', 'messages']);
    expect(await engine.inputValue()).toBe('code');
    expect(await variant.isHidden()).toBe(true);
    await provider.selectOption('claude');
    await page.getByTestId('session-prompt').fill('');
    await page.getByTestId('new-session-cancel').click();
    expect(await page.getByTestId('new-session-error').isHidden()).toBe(true);
  });

  it('cannot start a session before the providers arrived, and says so when they could not', async () => {
    // The relay's list fails until the test lets it through: the form says why and cannot be
    // sent; opening it again asks again.
    let failing = true;
    await page.route('**/api/providers', (route) => {
      if (failing) void route.fulfill({ status: 500, json: { error: { code: 'internal', message: 'The relay failed.' } } });
      else void route.continue();
    });
    await signIn(page);
    await openSessions(page);
    await page.getByTestId('new-session').click();
    const form = page.getByTestId('new-session-form');
    await page.locator('[data-testid="new-session-form"][data-state="failed"]').waitFor(WAIT);
    expect(await page.getByTestId('new-session-status').textContent()).toBe(
      'Could not load the relay’s providers, so no session can start yet. The relay failed. Close the form and open it again to retry.',
    );
    expect(await page.getByTestId('start-session').isDisabled()).toBe(true);
    expect(await page.getByTestId('session-provider').isDisabled()).toBe(true);
    expect(await page.getByTestId('session-provider').locator('option').count()).toBe(0);
    await page.getByTestId('new-session-cancel').click();
    failing = false;
    await page.getByTestId('new-session').click();
    await formReady(page);
    expect(await page.getByTestId('new-session-status').isHidden()).toBe(true);
    expect(await page.getByTestId('start-session').isEnabled()).toBe(true);
    expect(await page.getByTestId('session-provider').inputValue()).toBe('claude');
    expect(await form.isVisible()).toBe(true);
  });

  it('starts a session from the form, showing a refusal from the relay first', async () => {
    await signIn(page);
    await openSessions(page);
    await page.getByTestId('new-session').click();
    const form = page.getByTestId('new-session-form');
    await formReady(page);
    await page.getByTestId('session-provider').selectOption('claude');
    await page.getByTestId('session-engine').selectOption('messages');

    // A prompt over the relay's 64 KB body limit: the relay's 413 message is shown.
    await page.getByTestId('session-prompt').fill('x'.repeat(70_000));
    await page.getByTestId('start-session').click();
    await page.getByTestId('new-session-error').waitFor(WAIT);
    expect(await page.getByTestId('new-session-error').textContent()).toMatch(/larger than 64 KB/);
    expect(((await (await relay.api('/api/sessions')).json()) as { sessions: Session[] }).sessions).toEqual([]);

    await page.getByTestId('session-prompt').fill(PROMPT);
    await page.getByTestId('session-agents-may-answer').check();
    await page.getByTestId('start-session').click();

    // The new session opens at once, its prompt first in the transcript.
    await view(page).waitFor(WAIT);
    const sessionId = (await view(page).getAttribute('data-session-id'))!;
    expect(sessionId).toMatch(/^s_/);
    expect(new URL(page.url()).hash).toBe(`#sessions/${sessionId}`);
    expect(await form.isHidden()).toBe(true);
    await entries(page, 'user').first().waitFor(WAIT);
    expect(await entries(page, 'user').first().locator('.entry-text').textContent()).toBe(PROMPT);
    expect(await page.getByTestId('session-title').textContent()).toBe(PROMPT);
    expect(await apiSession(sessionId)).toMatchObject({ provider: 'claude', engine: 'messages', relayMode: 'autopilot', agentsMayAnswer: true });
  });

  it('shows the session waiting on its card, in the list and in the session', async () => {
    const { id } = await waitingSession();
    await signIn(page, `#sessions/${id}`);
    // The agent asks: the open session says so, and names the question.
    await view(page, 'waiting').waitFor(WAIT);
    expect(await page.getByTestId('session-banner').textContent()).toContain(QUESTION);
    expect(await entries(page, 'assistant').first().textContent()).toContain('Before I start: one choice is yours.');
    expect(await page.getByTestId('message-input').isDisabled()).toBe(true);
    expect(await page.getByTestId('composer-hint').textContent()).toMatch(/waiting on a card/);

    await page.getByTestId('back-to-sessions').click();
    const r = row(page, id);
    await page.waitForSelector(`[data-testid="session"][data-session-id="${id}"][data-status="waiting"]`, WAIT);
    expect(await r.getByTestId('session-provider').textContent()).toBe('claude · messages');
    expect(await r.getByTestId('session-status').textContent()).toBe('Waiting on you→');
    expect(await r.getByTestId('session-link').textContent()).toBe(PROMPT);
    expect(await r.textContent()).toContain('started ');
    expect(await page.getByTestId('tab-sessions-count').textContent()).toBe('1');
    expect((await apiSession(id)).status).toBe('waiting');
  });

  it('goes from the waiting badge to the card, which names its session, and answers it', async () => {
    const { id, card: asked } = await waitingSession();
    await signIn(page);
    await openSessions(page);
    await page.waitForSelector(`[data-testid="session"][data-session-id="${id}"][data-status="waiting"]`, WAIT);
    await row(page, id).getByTestId('session-status').click();
    expect(await page.getByTestId('board').isVisible()).toBe(true);
    const card = page.locator(`[data-testid="card"][data-card-id="${asked.id}"]`);
    await card.waitFor(WAIT);
    expect(await card.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await card.getByTestId('provider').textContent()).toBe('claude · messages');
    expect(await card.getByTestId('card-session').textContent()).toBe(`session ${id.slice(0, 8)}`);

    await card.locator('[data-testid="option"][data-label="PostgreSQL (Recommended)"]').click();
    await page.waitForSelector(`[data-testid="card"][data-card-id="${asked.id}"][data-status="answered"]`, WAIT);
    expect(await card.getByTestId('card-status').textContent()).toBe('Answered: PostgreSQL (Recommended)');

    // Back to the session from the card's chip.
    await card.getByTestId('card-session').click();
    await view(page).waitFor(WAIT);
    expect(await view(page).getAttribute('data-session-id')).toBe(id);
  });

  it('follows the transcript live: the tool result, the reply, then idle', async () => {
    const { id, card } = await waitingSession();
    await signIn(page, `#sessions/${id}`);
    await view(page, 'waiting').waitFor(WAIT);
    // A second tab keeps the session open; it is never reloaded, so what it shows came over the event stream.
    const watcher = await secondTab(`#sessions/${id}`);
    await view(watcher, 'waiting').waitFor(WAIT);
    await watcher.evaluate(() => ((window as unknown as { marker: number }).marker = 7));
    await page.bringToFront(); // a background tab's timers and animations are throttled

    await answer(card, 'PostgreSQL (Recommended)');
    await view(watcher, 'idle').waitFor(WAIT);
    expect(await watcher.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(7);
    for (const p of [watcher, page]) {
      await view(p, 'idle').waitFor(WAIT);
      expect(await entries(p).evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.role))).toEqual([
        'user',
        'assistant',
        'tool',
        'assistant',
      ]);
      const tool = entries(p, 'tool');
      expect(await tool.locator('.entry-text').textContent()).toBe(TOOL_RESULT);
      expect(await tool.getAttribute('data-card-id')).toBe(card.id);
      expect(await entries(p, 'assistant').last().locator('.entry-text').textContent()).toBe(REPLY);
      expect(await p.getByTestId('message-input').isEnabled()).toBe(true);
      expect(await p.getByTestId('session-banner').isHidden()).toBe(true);
    }
    expect(await apiSession(id)).toMatchObject({ status: 'idle' });

    // The tool entry leads to its (answered) card.
    await watcher.bringToFront();
    await entries(watcher, 'tool').getByTestId('entry-card').click();
    const shown = watcher.locator(`[data-testid="card"][data-card-id="${card.id}"]`);
    await shown.waitFor(WAIT);
    expect(await watcher.getByTestId('board').isVisible()).toBe(true);
    expect(await shown.getByTestId('card-status').textContent()).toBe('Answered: PostgreSQL (Recommended)');
    await watcher.goBack();
    await view(watcher, 'idle').waitFor(WAIT);
  });

  it('sends the next message when idle', async () => {
    const id = await idleSession();
    await signIn(page, `#sessions/${id}`);
    await view(page, 'idle').waitFor(WAIT);
    const watcher = await secondTab(`#sessions/${id}`);
    await view(watcher, 'idle').waitFor(WAIT);
    await page.bringToFront();
    await page.getByTestId('message-input').fill(NEXT);
    await page.getByTestId('message-input').press('Enter');
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid="transcript"] [data-testid="entry"]').length === 4,
      null,
      WAIT,
    );
    await view(page, 'idle').waitFor(WAIT);
    expect(await page.getByTestId('message-input').inputValue()).toBe('');
    expect(await entries(page, 'user').last().locator('.entry-text').textContent()).toBe(NEXT);
    expect(await entries(page, 'assistant').last().locator('.entry-text').textContent()).toBe(
      'Done: added an index on orders.created_at, and the tests pass.',
    );
    await entries(watcher).nth(3).waitFor(WAIT); // the other tab follows
  });

  it('shows a failed session with its error', async () => {
    const earlier = await idleSession();
    await signIn(page);
    await openSessions(page);
    await row(page, earlier).waitFor(WAIT);
    await page.getByTestId('new-session').click();
    await page.getByTestId('session-engine').selectOption('messages');
    await page.getByTestId('session-model').fill(BAD_MODEL);
    await page.getByTestId('session-prompt').fill('Try a model that does not exist.');
    await page.getByTestId('start-session').click();
    await view(page, 'failed').waitFor(WAIT);
    const failedId = (await view(page).getAttribute('data-session-id'))!;
    // The provider's own error, as the relay recorded it.
    expect(await page.getByTestId('session-banner').getByTestId('session-error').textContent()).toBe(`The model API at ${fake.url} answered 400: invalid_request_error: model: unknown model "${BAD_MODEL}"`);
    expect(await page.getByTestId('composer-hint').textContent()).toMatch(/failed/);
    expect(await page.getByTestId('stop-session').isHidden()).toBe(true);
    await page.getByTestId('back-to-sessions').click();
    const r = row(page, failedId);
    await page.waitForSelector(`[data-testid="session"][data-session-id="${failedId}"][data-status="failed"]`, WAIT);
    expect(await r.getByTestId('session-error').textContent()).toBe(`The model API at ${fake.url} answered 400: invalid_request_error: model: unknown model "${BAD_MODEL}"`);
    // Newest first.
    expect(await page.getByTestId('session').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.sessionId))).toEqual([failedId, earlier]);
  });

  it('shows a session started elsewhere live, flagged stuck while it is silent, then idle', async () => {
    await signIn(page);
    await openSessions(page);
    // The model's reply is held until the test releases it: the session is stuck until then.
    const id = await startSession(SLOW);
    const r = row(page, id);
    await page.waitForSelector(`[data-testid="session"][data-session-id="${id}"][data-status="stuck"]`, WAIT);
    expect(await r.getByTestId('session-link').textContent()).toBe(SLOW); // named by its prompt
    expect(await r.getByTestId('session-status').textContent()).toBe('Stuck?');
    expect(await r.textContent()).toContain('No activity for a while.');
    await r.getByTestId('session-link').click();
    await view(page, 'stuck').waitFor(WAIT);
    expect(await page.getByTestId('session-banner').textContent()).toContain('No activity for a while');
    expect(await page.getByTestId('composer-hint').textContent()).toMatch(/no activity/);
    expect((await apiSession(id)).status).toBe('stuck');

    slowReply.resolve();
    await view(page, 'idle').waitFor(WAIT);
    expect(await entries(page, 'assistant').last().textContent()).toContain('Plan: add the column');
    expect(await page.getByTestId('session-banner').isHidden()).toBe(true);
    await page.getByTestId('back-to-sessions').click();
    await page.waitForSelector(`[data-testid="session"][data-session-id="${id}"][data-status="idle"]`, WAIT);
  });

  it('lays out the list, the form and a session at desktop and phone widths, light and dark', async () => {
    const id = await idleSession();
    await signIn(page);
    await openSessions(page);
    await row(page, id).waitFor(WAIT);
    expect(await noSidewaysScroll(page)).toBe(true);

    // The form opens in view and fits the page.
    await page.getByTestId('new-session').click();
    await formReady(page);
    expect(await page.getByTestId('session-prompt').isVisible()).toBe(true);
    expect(await page.getByTestId('start-session').isVisible()).toBe(true);
    expect(await noSidewaysScroll(page)).toBe(true);
    await page.getByTestId('new-session-cancel').click();
    expect(await page.getByTestId('new-session-form').isHidden()).toBe(true);

    await row(page, id).getByTestId('session-link').click();
    await view(page, 'idle').waitFor(WAIT);
    expect(await entries(page).count()).toBe(2);
    expect(await page.getByTestId('message-input').isVisible()).toBe(true);
    expect(await noSidewaysScroll(page)).toBe(true);

    // Dark: the page follows the system's colour scheme.
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const light = await background();
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForFunction((before) => getComputedStyle(document.body).backgroundColor !== before, light, WAIT);
    const dark = await background();
    const brightness = (rgb: string) => rgb.match(/\d+/g)!.slice(0, 3).reduce((sum, n) => sum + Number(n), 0);
    expect(brightness(dark)).toBeLessThan(brightness(light));
    await page.emulateMedia({ colorScheme: 'light' });

    // A phone shows the latest messages with the message box at the bottom of the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    expect(await noSidewaysScroll(page)).toBe(true);
    const input = (await page.getByTestId('message-input').boundingBox())!;
    expect(input.y + input.height).toBeLessThanOrEqual(844);
    expect(input.y).toBeGreaterThan(844 / 2);
    expect(input.x + input.width).toBeLessThanOrEqual(390);
    const last = (await entries(page).last().boundingBox())!;
    expect(last.y + last.height).toBeLessThanOrEqual(input.y);
    expect(last.x + last.width).toBeLessThanOrEqual(390);
    await page.getByTestId('back-to-sessions').click();
    await page.getByTestId('session-list').waitFor(WAIT);
    expect(await noSidewaysScroll(page)).toBe(true);
    const link = (await row(page, id).getByTestId('session-link').boundingBox())!;
    expect(link.x + link.width).toBeLessThanOrEqual(390);
  });

  it('stops the session after a confirm', async () => {
    const id = await idleSession();
    await signIn(page, `#sessions/${id}`);
    await view(page, 'idle').waitFor(WAIT);
    const watcher = await secondTab(`#sessions/${id}`);
    await view(watcher, 'idle').waitFor(WAIT);
    await page.bringToFront();
    const stops: string[] = [];
    page.on('request', (req) => req.method() === 'DELETE' && stops.push(req.url()));

    // Dismissed: nothing is sent (counted below, once the accepted stop has gone out after it).
    const dismissed = new Promise<void>((resolve) => page.once('dialog', (dialog) => void dialog.dismiss().then(resolve)));
    await page.getByTestId('stop-session').click();
    await dismissed;
    expect(await page.getByTestId('stop-session').isVisible()).toBe(true);

    page.once('dialog', (dialog) => {
      expect(dialog.message()).toMatch(/Stop this session\?/);
      void dialog.accept();
    });
    await page.getByTestId('stop-session').click();
    await view(page, 'stopped').waitFor(WAIT);
    expect(stops).toEqual([new URL(`/api/sessions/${id}`, relay.url).href]); // only the accepted one
    expect((await apiSession(id)).status).toBe('stopped');
    expect(await page.getByTestId('stop-session').isHidden()).toBe(true);
    expect(await page.getByTestId('message-input').isDisabled()).toBe(true);
    expect(await page.getByTestId('composer-hint').textContent()).toMatch(/stopped/);
    await view(watcher, 'stopped').waitFor(WAIT);
    await page.getByTestId('back-to-sessions').click();
    await page.waitForSelector(`[data-testid="session"][data-session-id="${id}"][data-status="stopped"]`, WAIT);
  });
});
