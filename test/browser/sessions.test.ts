import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
import { fetchSession } from '../support/session-api.js';
import { collectPageErrors, launchChromium } from './chromium.js';

// The Sessions view against a real relay running real sessions: the `messages` engine
// (the real @anthropic-ai/sdk client) talks to the scripted Anthropic server, the card it
// asks is answered on the page, and the transcript follows live over SSE.

const WAIT = { timeout: 8000 };
const PROMPT = 'Set up the storage for the orders service.';
const QUESTION = 'Which database should the orders service use?';
const NEXT = 'Add an index on orders.created_at.';
const BAD_MODEL = 'claude-nonexistent';
const TOOL_RESULT = `Your questions have been answered: "${QUESTION}"="PostgreSQL (Recommended)". You can now continue with these answers in mind.`;
const REPLY = 'PostgreSQL it is. I created the orders schema and its first migration.';
const SLOW = 'Think the migration plan over.';

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
    await new Promise((resolve) => setTimeout(resolve, 1800)); // silent longer than ASKRELAY_STUCK_AFTER
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
let watcher: Page; // a second tab that keeps the session open while the first answers
const pageErrors: string[] = [];

const watch = (p: Page) => collectPageErrors(p, pageErrors);

beforeAll(async () => {
  fake = await startAnthropicServer({ model });
  [relay, browser] = await Promise.all([
    startTestRelay({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h', ASKRELAY_STUCK_AFTER: '600ms' }),
    launchChromium(),
  ]);
  context = await browser.newContext({ viewport: { width: 900, height: 1000 } });
  page = await context.newPage();
  watch(page);
});

afterAll(async () => {
  await browser?.close();
  await relay?.stop();
  await fake?.close();
});

const apiSession = (id: string) => fetchSession(relay, id);

const row = (p: Page, id: string): Locator => p.locator(`[data-testid="session"][data-session-id="${id}"]`);
const view = (p: Page, status?: string): Locator =>
  p.locator(`[data-testid="session-detail"] .session-view${status ? `[data-status="${status}"]` : ''}`);
const entries = (p: Page, role?: string): Locator =>
  p.locator(`[data-testid="transcript"] [data-testid="entry"]${role ? `[data-role="${role}"]` : ''}`);

let sessionId = '';
let cardId = '';

describe('sessions on the web page', () => {
  it('signs in and shows the Sessions view, empty', async () => {
    await page.goto(relay.url);
    await page.getByTestId('token-input').fill('test-token-0123456789abcdef');
    await page.getByTestId('token-input').press('Enter');
    await page.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
    expect(await page.getByTestId('board').isVisible()).toBe(true); // Cards stays the main view
    await page.getByTestId('tab-sessions').click();
    await page.getByTestId('sessions').waitFor(WAIT);
    expect(await page.getByTestId('board').isHidden()).toBe(true);
    expect(await page.getByTestId('sessions-empty').isVisible()).toBe(true);
  });

  it('offers each provider its engines, and the ask_user variant only for the extension engine', async () => {
    await page.getByTestId('new-session').click();
    await page.getByTestId('new-session-form').waitFor(WAIT);
    const provider = page.getByTestId('session-provider');
    const engine = page.getByTestId('session-engine');
    const variant = page.getByTestId('session-ask-user-variant');
    const engines = () => engine.locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));

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
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/sessions-new-openai.png', fullPage: true });

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

  it('starts a session from the form, showing a refusal from the relay first', async () => {
    await page.getByTestId('new-session').click();
    const form = page.getByTestId('new-session-form');
    await form.waitFor(WAIT);
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
    sessionId = (await view(page).getAttribute('data-session-id'))!;
    expect(sessionId).toMatch(/^s_/);
    expect(new URL(page.url()).hash).toBe(`#sessions/${sessionId}`);
    expect(await form.isHidden()).toBe(true);
    await entries(page, 'user').first().waitFor(WAIT);
    expect(await entries(page, 'user').first().locator('.entry-text').textContent()).toBe(PROMPT);
    expect(await page.getByTestId('session-title').textContent()).toBe(PROMPT);

    const started = await apiSession(sessionId);
    expect(started).toMatchObject({ provider: 'claude', engine: 'messages', relayMode: 'autopilot', agentsMayAnswer: true });

    // A second tab keeps this session open for the rest of the test.
    watcher = await context.newPage();
    watch(watcher);
    await watcher.goto(`${relay.url}#sessions/${sessionId}`);
    await view(watcher).waitFor(WAIT);
    await watcher.evaluate(() => ((window as unknown as { marker: number }).marker = 7));
    await page.bringToFront(); // a background tab's timers and animations are throttled
  });

  it('shows the session waiting on its card, in the list and in the session', async () => {
    // The agent asks: the open session says so, and names the question.
    await view(page, 'waiting').waitFor(WAIT);
    expect(await page.getByTestId('session-banner').textContent()).toContain(QUESTION);
    expect(await entries(page, 'assistant').first().textContent()).toContain('Before I start: one choice is yours.');
    expect(await page.getByTestId('message-input').isDisabled()).toBe(true);
    expect(await page.getByTestId('composer-hint').textContent()).toMatch(/waiting on a card/);
    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/sessions-waiting.png', fullPage: true });

    await page.getByTestId('back-to-sessions').click();
    const r = row(page, sessionId);
    await page.waitForSelector(`[data-testid="session"][data-session-id="${sessionId}"][data-status="waiting"]`, WAIT);
    expect(await r.getByTestId('session-provider').textContent()).toBe('claude · messages');
    expect(await r.getByTestId('session-status').textContent()).toBe('Waiting on you→');
    expect(await r.getByTestId('session-link').textContent()).toBe(PROMPT);
    expect(await r.textContent()).toContain('started ');
    expect(await page.getByTestId('tab-sessions-count').textContent()).toBe('1');
    expect((await apiSession(sessionId)).status).toBe('waiting');
    await page.screenshot({ path: 'test-artifacts/sessions-list-waiting.png', fullPage: true });
  });

  it('goes from the waiting badge to the card, which names its session, and answers it', async () => {
    await row(page, sessionId).getByTestId('session-status').click();
    expect(await page.getByTestId('board').isVisible()).toBe(true);
    const cards = ((await (await relay.api(`/api/cards?sessionId=${sessionId}&status=pending`)).json()) as { cards: Card[] }).cards;
    expect(cards).toHaveLength(1);
    cardId = cards[0].id;
    const card = page.locator(`[data-testid="card"][data-card-id="${cardId}"]`);
    await card.waitFor(WAIT);
    expect(await card.evaluate((el) => el === document.activeElement)).toBe(true);
    expect(await card.getByTestId('provider').textContent()).toBe('claude · messages');
    expect(await card.getByTestId('card-session').textContent()).toBe(`session ${sessionId.slice(0, 8)}`);
    await page.waitForTimeout(250); // the card's arrival animation
    await page.screenshot({ path: 'test-artifacts/sessions-card.png' });

    await card.locator('[data-testid="option"][data-label="PostgreSQL (Recommended)"]').click();
    await page.waitForSelector(`[data-testid="card"][data-card-id="${cardId}"][data-status="answered"]`, WAIT);
    expect(await card.getByTestId('card-status').textContent()).toBe('Answered: PostgreSQL (Recommended)');

    // Back to the session from the card's chip.
    await card.getByTestId('card-session').click();
    await view(page).waitFor(WAIT);
    expect(await view(page).getAttribute('data-session-id')).toBe(sessionId);
  });

  it('follows the transcript live: the tool result, the reply, then idle', async () => {
    // The watching tab was never reloaded: everything came over the event stream.
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
      expect(await tool.getAttribute('data-card-id')).toBe(cardId);
      expect(await entries(p, 'assistant').last().locator('.entry-text').textContent()).toBe(REPLY);
      expect(await p.getByTestId('message-input').isEnabled()).toBe(true);
      expect(await p.getByTestId('session-banner').isHidden()).toBe(true);
    }
    expect(await apiSession(sessionId)).toMatchObject({ status: 'idle' });

    // The tool entry leads to its (answered) card.
    await watcher.bringToFront();
    await entries(watcher, 'tool').getByTestId('entry-card').click();
    const card = watcher.locator(`[data-testid="card"][data-card-id="${cardId}"]`);
    await card.waitFor(WAIT);
    expect(await watcher.getByTestId('board').isVisible()).toBe(true);
    expect(await card.getByTestId('card-status').textContent()).toBe('Answered: PostgreSQL (Recommended)');
    await watcher.goBack();
    await view(watcher, 'idle').waitFor(WAIT);
    await page.bringToFront();
  });

  it('sends the next message when idle', async () => {
    await page.getByTestId('message-input').fill(NEXT);
    await page.getByTestId('message-input').press('Enter');
    await page.waitForFunction(
      () => document.querySelectorAll('[data-testid="transcript"] [data-testid="entry"]').length === 6,
      null,
      WAIT,
    );
    await view(page, 'idle').waitFor(WAIT);
    expect(await page.getByTestId('message-input').inputValue()).toBe('');
    expect(await entries(page, 'user').last().locator('.entry-text').textContent()).toBe(NEXT);
    expect(await entries(page, 'assistant').last().locator('.entry-text').textContent()).toBe(
      'Done: added an index on orders.created_at, and the tests pass.',
    );
    await entries(watcher).nth(5).waitFor(WAIT);
  });

  it('shows a failed session with its error', async () => {
    await page.getByTestId('back-to-sessions').click();
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
    expect(await page.getByTestId('session').first().getAttribute('data-session-id')).toBe(failedId);
  });

  it('shows a session started elsewhere live, flagged stuck while it is silent, then idle', async () => {
    await page.getByTestId('tab-sessions').click();
    const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt: SLOW } });
    expect(res.status).toBe(201);
    const slow = (await res.json()) as Session;
    const r = row(page, slow.id);
    await page.waitForSelector(`[data-testid="session"][data-session-id="${slow.id}"][data-status="stuck"]`, WAIT);
    expect(await r.getByTestId('session-link').textContent()).toBe(SLOW); // named by its prompt
    expect(await r.getByTestId('session-status').textContent()).toBe('Stuck?');
    expect(await r.textContent()).toContain('No activity for a while.');
    await r.getByTestId('session-link').click();
    await view(page).waitFor(WAIT);
    if ((await view(page).getAttribute('data-status')) === 'stuck') {
      expect(await page.getByTestId('session-banner').textContent()).toContain('No activity for a while');
      expect(await page.getByTestId('composer-hint').textContent()).toMatch(/no activity/);
    }
    await view(page, 'idle').waitFor(WAIT);
    expect(await entries(page, 'assistant').last().textContent()).toContain('Plan: add the column');
    await page.getByTestId('back-to-sessions').click();
    await page.waitForSelector(`[data-testid="session"][data-session-id="${slow.id}"][data-status="idle"]`, WAIT);
  });

  it('looks right (screenshots)', async () => {
    mkdirSync('test-artifacts', { recursive: true });
    await page.screenshot({ path: 'test-artifacts/sessions-list.png', fullPage: true });
    await page.getByTestId('new-session').click();
    await page.getByTestId('new-session-form').waitFor(WAIT);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.waitForTimeout(250); // let the form's arrival animation settle
    await page.screenshot({ path: 'test-artifacts/sessions-new.png', fullPage: true });
    await page.getByTestId('new-session-cancel').click();

    await row(page, sessionId).getByTestId('session-link').click();
    await view(page, 'idle').waitFor(WAIT);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await page.waitForTimeout(250); // let the arrival animation settle
    await page.screenshot({ path: 'test-artifacts/sessions.png', fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(200); // colour transitions
    await page.screenshot({ path: 'test-artifacts/sessions-dark.png', fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
    // A phone shows the latest messages with the message box fixed at the bottom.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    await page.waitForTimeout(200);
    await page.screenshot({ path: 'test-artifacts/sessions-phone.png' });
    await page.getByTestId('back-to-sessions').click();
    await page.getByTestId('session-list').waitFor(WAIT);
    await page.screenshot({ path: 'test-artifacts/sessions-list-phone.png', fullPage: true });
    await page.setViewportSize({ width: 900, height: 1000 });
    await row(page, sessionId).getByTestId('session-link').click();
    await view(page, 'idle').waitFor(WAIT);
  });

  it('stops the session after a confirm', async () => {
    // Dismissed: nothing happens.
    page.once('dialog', (dialog) => void dialog.dismiss());
    await page.getByTestId('stop-session').click();
    await page.waitForTimeout(100);
    expect((await apiSession(sessionId)).status).toBe('idle');

    page.once('dialog', (dialog) => {
      expect(dialog.message()).toMatch(/Stop this session\?/);
      void dialog.accept();
    });
    await page.getByTestId('stop-session').click();
    await view(page, 'stopped').waitFor(WAIT);
    expect((await apiSession(sessionId)).status).toBe('stopped');
    expect(await page.getByTestId('stop-session').isHidden()).toBe(true);
    expect(await page.getByTestId('message-input').isDisabled()).toBe(true);
    expect(await page.getByTestId('composer-hint').textContent()).toMatch(/stopped/);
    await view(watcher, 'stopped').waitFor(WAIT);
    await page.getByTestId('back-to-sessions').click();
    await page.waitForSelector(`[data-testid="session"][data-session-id="${sessionId}"][data-status="stopped"]`, WAIT);
    expect(pageErrors).toEqual([]);
  });
});
