import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import type { AuditEntry } from '../../src/store/audit-store.js';
import { startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { fetchSession } from '../support/session-api.js';
import { waitUntil } from '../support/wait-until.js';
import { collectPageErrors, launchChromium, newContext } from './chromium.js';

// Who may answer, on the web page, against a real relay in real Chromium: the human lets
// other agents answer a session's questions (the New session checkbox, the switch on each
// session), the relay stores it (GET /api/sessions/:id) and audits it; a card answered by
// another session's agent with its own agent token shows whose answer it was. The sessions
// run the `messages` engine against the scripted Anthropic server, which answers every
// prompt with text, so they go idle and their agent tokens stay valid.

const WAIT = { timeout: 8000 };

let fake: AnthropicServer;
let relay: TestRelay;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

beforeAll(async () => {
  fake = await startAnthropicServer({ model: () => ({ text: 'Done.' }) });
  [relay, browser] = await Promise.all([
    startTestRelay({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h' }),
    launchChromium(),
  ]);
  const context = await newContext(browser, { viewport: { width: 900, height: 1000 } });
  page = await context.newPage();
  collectPageErrors(page, pageErrors);
});

afterAll(async () => {
  await browser?.close();
  await relay?.stop();
  await fake?.close();
});

const apiSession = (id: string) => fetchSession(relay, id);

async function idle(id: string): Promise<Session> {
  return waitUntil(async () => {
    const s = await apiSession(id);
    return s.status === 'idle' ? s : undefined;
  }, `session ${id} idle`);
}

async function startSession(prompt: string): Promise<Session> {
  const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt } });
  expect(res.status).toBe(201);
  return idle(((await res.json()) as Session).id);
}

async function audit(): Promise<AuditEntry[]> {
  return ((await (await relay.api('/api/audit')).json()) as { entries: AuditEntry[] }).entries;
}

/** A request with a session's agent token, as that session's agent (or a script it runs) would send it. */
function asAgent(sessionId: string, path: string, json: unknown): Promise<Response> {
  return fetch(new URL(path, relay.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${relay.sessions.agentToken(sessionId)}`, 'content-type': 'application/json' },
    body: JSON.stringify(json),
  });
}

const row = (id: string): Locator => page.locator(`[data-testid="session"][data-session-id="${id}"]`);
/** The switches, by where they are: the row in the list, or the open session's header. */
const ROW_SWITCH = (id: string) => `[data-testid="session"][data-session-id="${id}"] [data-testid="agents-may-answer"]`;
const VIEW_SWITCH = '[data-testid="session-detail"] [data-testid="agents-may-answer"]';
const rowSwitch = (id: string): Locator => page.locator(ROW_SWITCH(id));
const viewSwitch = (): Locator => page.locator(VIEW_SWITCH);
/** What a person clicks: the switch's label (its track and text); the checkbox itself is visually hidden. */
const flip = (selector: string) => page.locator(selector).locator('xpath=ancestor::label[1]').click(WAIT);
const cardOn = (id: string): Locator => page.locator(`[data-testid="card"][data-card-id="${id}"]`);

/** The relay stored `on`, and the switch at `selector` shows it, ready for the next change. */
async function expectSetting(id: string, on: boolean, selector: string) {
  await waitUntil(async () => (await apiSession(id)).agentsMayAnswer === on, `agentsMayAnswer ${on} stored for ${id}`);
  await page.waitForFunction(
    ([sel, want]) => {
      const input = document.querySelector(sel) as HTMLInputElement | null;
      return input !== null && input.checked === want && !input.hasAttribute('aria-busy');
    },
    [selector, on] as const,
    WAIT,
  );
}

/** `inner` is shown, with a size, and lies wholly within `outer` (nothing cut off or spilling over). */
async function expectInside(inner: Locator, outer: Locator) {
  expect(await inner.isVisible()).toBe(true);
  const [a, b] = [(await inner.boundingBox())!, (await outer.boundingBox())!];
  expect(a.width).toBeGreaterThan(0);
  expect(a.height).toBeGreaterThan(0);
  expect(a.x).toBeGreaterThanOrEqual(b.x);
  expect(a.y).toBeGreaterThanOrEqual(b.y);
  expect(a.x + a.width).toBeLessThanOrEqual(b.x + b.width);
  expect(a.y + a.height).toBeLessThanOrEqual(b.y + b.height);
}

let asker: Session; // its card is answered by another agent
let helper: Session; // the other agent

describe('who may answer, on the web page', () => {
  beforeAll(async () => {
    [asker, helper] = await Promise.all([startSession('The session that asks.'), startSession('The session that helps.')]);
    expect(asker.agentsMayAnswer).toBe(false);
  });

  it('signs in and shows each session with its setting, off by default', async () => {
    await page.goto(`${relay.url}#sessions`);
    await page.getByTestId('token-input').fill('test-token-0123456789abcdef');
    await page.getByTestId('token-input').press('Enter');
    await page.waitForSelector('[data-testid="connection"][data-state="live"]', WAIT);
    await rowSwitch(asker.id).waitFor({ state: 'attached', ...WAIT });
    for (const s of [asker, helper]) {
      expect(await rowSwitch(s.id).isChecked()).toBe(false);
      expect(await rowSwitch(s.id).isEnabled()).toBe(true);
      expect(await row(s.id).getByText('Other agents may answer its questions').isVisible()).toBe(true);
    }
  });

  it('toggles agentsMayAnswer from the list and from the open session, stored and audited', async () => {
    // On in the list: the relay stores it, and the row still opens the session elsewhere.
    await flip(ROW_SWITCH(asker.id));
    await expectSetting(asker.id, true, ROW_SWITCH(asker.id));
    expect(new URL(page.url()).hash).toBe('#sessions'); // the click toggled; it did not open the session
    expect(await rowSwitch(helper.id).isChecked()).toBe(false); // only that session

    // Off, then on again, in the open session.
    await row(asker.id).getByTestId('session-link').click();
    await viewSwitch().waitFor(WAIT);
    expect(await viewSwitch().isChecked()).toBe(true);
    expect(await page.locator('[data-testid="session-detail"] .session-head').innerText()).not.toMatch(/null|undefined/);
    await flip(VIEW_SWITCH);
    await expectSetting(asker.id, false, VIEW_SWITCH);
    await viewSwitch().press('Space'); // a switch works from the keyboard, and keeps the focus
    await expectSetting(asker.id, true, VIEW_SWITCH);
    expect(await page.evaluate((sel) => document.activeElement === document.querySelector(sel), VIEW_SWITCH)).toBe(true);
    // The switch and what it says sit in the open session's header, on screen.
    await expectInside(page.locator(VIEW_SWITCH).locator('xpath=ancestor::label[1]'), page.locator('[data-testid="session-detail"] .session-head'));

    // Each change is in the audit log: the human, on the page.
    const changes = (await audit()).filter((e) => e.event === 'session.permission' && e.sessionId === asker.id);
    expect(changes.map((e) => [e.actor, e.surface, e.detail])).toEqual([
      [{ kind: 'human', id: 'operator' }, 'web', { agentsMayAnswer: true }],
      [{ kind: 'human', id: 'operator' }, 'web', { agentsMayAnswer: false }],
      [{ kind: 'human', id: 'operator' }, 'web', { agentsMayAnswer: true }],
    ]);

    // The list follows (it is re-rendered from the session.updated event).
    await page.getByTestId('back-to-sessions').click();
    expect(await rowSwitch(asker.id).isChecked()).toBe(true);
    // Each row shows its switch with its words, inside the row, and the list fits the page.
    for (const s of [asker, helper]) await expectInside(page.locator(ROW_SWITCH(s.id)).locator('xpath=ancestor::label[1]'), row(s.id));
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)).toBe(true);
  });

  it('a change made elsewhere (the API) shows at once', async () => {
    const res = await relay.api(`/api/sessions/${helper.id}`, { method: 'PATCH', json: { agentsMayAnswer: true } });
    expect(res.status).toBe(200);
    await expectSetting(helper.id, true, ROW_SWITCH(helper.id));
    const off = await relay.api(`/api/sessions/${helper.id}`, { method: 'PATCH', json: { agentsMayAnswer: false } });
    expect(off.status).toBe(200);
    await expectSetting(helper.id, false, ROW_SWITCH(helper.id));
  });

  it('starts a session with the box checked', async () => {
    await page.getByTestId('new-session').click();
    await page.getByTestId('session-engine').selectOption('messages');
    await page.getByTestId('session-prompt').fill('A session other agents may help.');
    await page.getByTestId('new-session-form').getByText('Other agents may answer its questions').click(); // the label checks its box
    expect(await page.getByTestId('session-agents-may-answer').isChecked()).toBe(true);
    await expectInside(page.getByTestId('new-session-form').getByText('Other agents may answer its questions'), page.getByTestId('new-session-form'));
    await page.getByTestId('start-session').click();
    await viewSwitch().waitFor(WAIT);
    const id = (await page.locator('[data-testid="session-detail"] .session-view').getAttribute('data-session-id'))!;
    expect((await apiSession(id)).agentsMayAnswer).toBe(true);
    expect(await viewSwitch().isChecked()).toBe(true);
    await idle(id);
    await page.getByTestId('back-to-sessions').click();

    // Stopped, the session keeps its setting on show, but it can no longer be changed.
    expect((await relay.api(`/api/sessions/${id}`, { method: 'DELETE' })).status).toBe(200);
    await page.waitForSelector(`[data-testid="session"][data-session-id="${id}"][data-status="stopped"]`, WAIT);
    expect(await rowSwitch(id).isChecked()).toBe(true);
    expect(await rowSwitch(id).isDisabled()).toBe(true);
  });

  it('a refused change: the switch goes back to the stored setting and says why', async () => {
    await page.route(`**/api/sessions/${helper.id}`, (route) =>
      route.request().method() === 'PATCH'
        ? route.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ error: { code: 'not_found', message: `No session "${helper.id}".` } }) })
        : route.fallback(),
    );
    try {
      await flip(ROW_SWITCH(helper.id));
      const error = row(helper.id).getByTestId('agents-may-answer-error');
      await error.waitFor(WAIT);
      expect(await error.textContent()).toBe(`Could not change who may answer: No session "${helper.id}".`);
      expect(await rowSwitch(helper.id).isChecked()).toBe(false);
      expect((await apiSession(helper.id)).agentsMayAnswer).toBe(false);
    } finally {
      await page.unroute(`**/api/sessions/${helper.id}`);
    }
    // The next change goes through and clears the error.
    await flip(ROW_SWITCH(helper.id));
    await expectSetting(helper.id, true, ROW_SWITCH(helper.id));
    expect(await row(helper.id).getByTestId('agents-may-answer-error').count()).toBe(0);
    await flip(ROW_SWITCH(helper.id));
    await expectSetting(helper.id, false, ROW_SWITCH(helper.id));
  });

  it('shows a card answered by another session\'s agent as the agent\'s answer, a human answer as before', async () => {
    await page.getByTestId('tab-cards').click();
    const forAgent = await relay.relay.create({ sessionId: asker.id, questions: [{ text: 'Which cache?', options: ['Redis', 'Memcached'] }] });
    const forHuman = await relay.relay.create({ sessionId: asker.id, questions: [{ text: 'Which queue?', options: ['SQS', 'Kafka'] }] });
    await cardOn(forAgent.id).waitFor(WAIT);
    await cardOn(forHuman.id).waitFor(WAIT);

    // The helper session's agent answers the asker's card with its own token.
    const res = await asAgent(helper.id, `/api/cards/${forAgent.id}/answer`, { answers: { q1: { selected: ['Redis'] } } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Card).answeredBy).toEqual({ kind: 'agent', id: helper.id, surface: 'api' });

    await page.waitForSelector(`[data-testid="card"][data-card-id="${forAgent.id}"][data-status="answered"]`, WAIT);
    const agentCard = cardOn(forAgent.id);
    expect(await agentCard.getAttribute('data-answered-by')).toBe('agent');
    expect(await agentCard.getByTestId('card-status').textContent()).toBe('Answered: Redis');
    const badge = agentCard.getByTestId('answered-by-agent');
    expect(await badge.textContent()).toBe(`answered by agent ${helper.id.slice(0, 8)} (api)`);
    expect(await badge.getAttribute('title')).toContain(helper.id);
    expect(await badge.isVisible()).toBe(true);

    // The human answers the other card on the page: no badge.
    await cardOn(forHuman.id).locator('[data-testid="option"][data-label="Kafka"]').click();
    await page.waitForSelector(`[data-testid="card"][data-card-id="${forHuman.id}"][data-status="answered"]`, WAIT);
    expect(await cardOn(forHuman.id).getAttribute('data-answered-by')).toBe('human');
    expect(await cardOn(forHuman.id).getByTestId('answered-by-agent').count()).toBe(0);
    expect(await cardOn(forHuman.id).getByTestId('card-status').textContent()).toBe('Answered: Kafka');
    const colors = await Promise.all(
      [agentCard, cardOn(forHuman.id)].map((c) => c.getByTestId('card-status').evaluate((el) => getComputedStyle(el).backgroundColor)),
    );
    expect(colors[0]).not.toBe(colors[1]); // told apart at a glance, not only by the badge
    await expectInside(badge, agentCard);

    // The badge leads to the agent's session.
    await badge.click();
    await page.locator(`[data-testid="session-detail"] .session-view[data-session-id="${helper.id}"]`).waitFor(WAIT);
    await page.getByTestId('tab-cards').click();
  });

  it('keeps approval cards the human\'s: the agent is refused, the human answers it on the page', async () => {
    const approval = await relay.relay.create({
      sessionId: asker.id,
      kind: 'approval',
      tool: 'start_session',
      title: 'Start a session?',
      questions: [{ id: 'approve', header: 'Approve?', text: 'The agent wants to start a claude session.', options: ['Approve', 'Deny'] }],
    });
    const card = cardOn(approval.id);
    await card.waitFor(WAIT);
    expect(await card.locator('.chip-approval').textContent()).toBe('Approval');

    const refused = await asAgent(helper.id, `/api/cards/${approval.id}/answer`, { answers: { approve: { selected: ['Approve'] } } });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('human_only');
    expect(await card.getAttribute('data-status')).toBe('pending');

    await card.locator('[data-testid="option"][data-label="Deny"]').click();
    await page.waitForSelector(`[data-testid="card"][data-card-id="${approval.id}"][data-status="answered"]`, WAIT);
    expect(await card.getByTestId('card-status').textContent()).toBe('Answered: Deny');
    expect(await card.getByTestId('answered-by-agent').count()).toBe(0);
    expect(((await (await relay.api(`/api/cards/${approval.id}`)).json()) as Card).answeredBy).toEqual({ kind: 'human', id: 'operator', surface: 'web' });
    expect(pageErrors).toEqual([]);
  });

  it('says which chat user answered a card from a chat channel', async () => {
    const card = await relay.relay.create({ questions: [{ text: 'Which queue?', options: ['Kafka', 'NATS'] }] });
    await page.waitForSelector(`[data-testid="card"][data-card-id="${card.id}"]`, WAIT);
    await relay.relay.answer(card.id, { q1: { selected: ['NATS'] } }, { by: { kind: 'human', id: 'telegram:42', surface: 'telegram' } });
    await page.waitForSelector(`[data-testid="card"][data-card-id="${card.id}"][data-status="answered"]`, WAIT);
    const chip = cardOn(card.id).getByTestId('answered-in-channel');
    expect(await chip.textContent()).toBe('answered in telegram (42)');
    expect(await chip.getAttribute('title')).toBe('Answered in telegram by user 42');
    expect(await cardOn(card.id).getAttribute('data-answered-by')).toBe('human');
    expect(await cardOn(card.id).getByTestId('answered-by-agent').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });
});
