import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// askrelay tui as a person uses it: in a real terminal (a detached tmux session), against a
// real relay, with key presses from `tmux send-keys` and the screen read by `capture-pane`.

const BIN = fileURLToPath(new URL('../../bin/askrelay.js', import.meta.url));

const tmux = (...args: string[]) => execFileSync('tmux', args, { encoding: 'utf8' });

// npm test installs tmux first (scripts/ensure-test-tools.js); without it these fail, never skip.
describe('askrelay tui in tmux', () => {
  // Each test has its own relay and its own TUI in its own tmux session: what one test leaves
  // on the screen or pending at the relay is never what another one reads.
  let relay: TestRelay;
  let session = '';
  let count = 0;
  const screen = () => tmux('capture-pane', '-p', '-t', session);
  const keys = (...k: string[]) => tmux('send-keys', '-t', session, ...k);
  // Each wait ends well inside the test's own time limit, so a failure names the step it stalled on.
  const STEP_MS = 20_000;
  const shows = (text: string, what = `"${text}" on the screen`) =>
    waitUntil(() => screen().includes(text), what, STEP_MS).catch((err: Error) => {
      // The screen as it was, for the failure message.
      throw new Error(`${err.message}; the screen:\n${screen()}`);
    });

  beforeEach(async () => {
    relay = await startTestRelay();
    session = `askrelay-tui-${process.pid}-${++count}`;
    const env = `ASKRELAY_URL=${relay.url} ASKRELAY_TOKEN=${relay.token}`;
    tmux('new-session', '-d', '-s', session, '-x', '110', '-y', '30', `env ${env} ${process.execPath} ${BIN} tui`);
    // Keep the pane (and what it printed) if the command ends early, for the failure message.
    tmux('set-option', '-t', session, 'remain-on-exit', 'on');
    await shows('No pending cards', 'the TUI to start');
  });

  afterEach(async () => {
    try {
      tmux('kill-session', '-t', session);
    } catch {
      // already gone
    }
    await relay?.close();
    if (relay) rmSync(relay.dataDir, { recursive: true, force: true });
  });

  const within = <T>(what: string, work: Promise<T>) =>
    Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), STEP_MS).unref())]);

  async function ask(input: unknown): Promise<Card> {
    // After a restart the test's own fetch may first pick a pooled socket of the old relay.
    const res = await waitUntil(
      () => relay.api('api/cards', { method: 'POST', json: input, signal: AbortSignal.timeout(5000) }).catch(() => undefined),
      'the relay to take the card',
      STEP_MS,
    );
    expect(res.status).toBeLessThan(300);
    return (await res.json()) as Card;
  }
  const get = async (id: string) => (await (await relay.api(`api/cards/${id}`)).json()) as Card;
  /** The card once the relay has its answer. */
  const answeredCard = (id: string) =>
    waitUntil(async () => {
      const c = await get(id);
      return c.status === 'answered' && c;
    }, 'the answer at the relay', STEP_MS);

  it('answers a single-choice card picked with the arrow keys', async () => {
    const card = await ask({ questions: [{ header: 'DB', text: 'Which database?', options: ['sqlite', 'postgres', 'mysql'] }] });
    await shows('Which database?', 'the new card in the list');
    keys('Enter');
    await shows('> 1. sqlite');
    expect(screen()).toMatch(/ · (7h 59m|8h 0m) left · /); // as the page and `askrelay cards` write it
    keys('Down');
    await shows('> 2. postgres');
    keys('Enter');
    const answered = await answeredCard(card.id);
    expect(answered.answer).toEqual({ [answered.questions[0].id]: { selected: ['postgres'] } });
    expect(answered.answeredBy?.surface).toBe('cli');
    await shows(`Answered ${card.id.slice(0, 12)}`);
  });

  it('answers a multi-choice card with number keys and space', async () => {
    const card = await ask({ questions: [{ text: 'Which languages?', options: ['ts', 'go', 'rust'], multiSelect: true }] });
    await shows('Which languages?');
    keys('Enter');
    await shows('[ ] rust');
    keys('1');
    await shows('[x] ts');
    keys('Down', 'Down');
    await shows('> 3. [ ] rust');
    keys('Space');
    await shows('[x] rust');
    keys('Enter');
    const answered = await answeredCard(card.id);
    expect(answered.answer).toEqual({ [answered.questions[0].id]: { selected: ['ts', 'rust'] } });
  });

  it('answers with free text through Other…', async () => {
    const card = await ask({ questions: [{ text: 'Name the project', options: ['alpha', 'beta'] }] });
    await shows('Name the project');
    keys('Enter');
    await shows('3. Other…');
    keys('3');
    await shows('Your answer:');
    keys('-l', 'gamma ray');
    await shows('Your answer: gamma ray_');
    keys('Enter');
    const answered = await answeredCard(card.id);
    expect(answered.answer).toEqual({ [answered.questions[0].id]: { selected: [], text: 'gamma ray' } });
  });

  it('a tall card scrolls under a status line that stays; e shows a cut line whole; ← goes back a question', async () => {
    const long = Array.from({ length: 45 }, (_, i) => `Step ${i + 1}: check the replica.`).join('\n');
    const wide = `Which region? ${'very '.repeat(30)}far away`;
    const card = await ask({
      questions: [
        { header: 'Plan', text: long, options: ['go', 'wait'] },
        { header: 'Region', text: wide, options: ['eu', 'us'] },
        { header: 'Name', text: 'Name the run' },
      ],
    });
    await shows('Step 1: check the replica.');
    keys('Enter');
    await shows('more lines (PgDn)', 'the card cut at the bottom of the terminal');
    const statusLine = () => screen().split('\n')[0];
    expect(statusLine()).toMatch(/^askrelay tui — card \S+ · question 1\/3 · (7h 59m|8h 0m) left · live$/);
    keys('Down'); // onto "wait", below the fold: the card scrolls, the status line stays
    await shows('> 2. wait');
    expect(statusLine()).toMatch(/^askrelay tui — card .* · question 1\/3 · /);
    expect(screen()).toContain('more lines (PgUp)');
    keys('PPage', 'PPage', 'PPage', 'PPage', 'PPage');
    await shows('Step 1: check the replica.', 'the top of the question again');
    keys('1');
    await shows('question 2/3');
    expect(screen()).not.toContain('far away');
    keys('e');
    await shows('far away', 'the cut line shown whole');
    keys('2');
    // A question without options is a prompt for words, not a list with Other… and Skip.
    await shows('Your answer: _');
    expect(screen()).not.toContain('Other…');
    keys('Left');
    await shows('> 2. us', 'the question before, with its answer under the cursor');
    keys('1');
    await shows('Your answer: _');
    keys('-l', 'nightly');
    keys('Enter');
    const answered = await answeredCard(card.id);
    expect(answered.answer).toEqual({ q1: { selected: ['go'] }, q2: { selected: ['eu'] }, q3: { selected: [], text: 'nightly' } });
  });

  it('closes an open card that is answered elsewhere', async () => {
    const card = await ask({ questions: [{ text: 'Deploy now?', options: ['yes', 'no'] }] });
    await shows('Deploy now?');
    keys('Enter');
    await shows('> 1. yes');
    const res = await relay.api(`api/cards/${card.id}/skip`, { method: 'POST' });
    expect(res.status).toBe(200);
    await shows('was skipped elsewhere');
    await shows('No pending cards');
  });

  it('Esc collapses a card to a one-line indicator and /question reopens its prompt', async () => {
    const card = await ask({ questions: [{ header: 'Store', text: 'Where do the cards live?', options: ['SQLite', 'Postgres'] }] });
    await shows('Where do the cards live?');
    keys('Enter');
    await shows('> 1. SQLite');
    keys('Down');
    await shows('> 2. Postgres');
    keys('Escape');
    await shows('1 card waiting · /question reopens the one you left: [Store] Where do the cards live?', 'the collapsed indicator');
    expect(screen()).not.toContain('> 2. Postgres');
    keys('-l', '/question');
    await shows('› /question_');
    keys('Enter');
    // the prompt is back where it was left
    await shows('> 2. Postgres', 'the reopened prompt');
    expect(screen()).toContain('Where do the cards live?');
    expect(screen()).not.toContain('reopens the one you left');
    // Esc and typing at once (one "meta" key for Node's decoder): Esc, then the typed text
    keys('Escape');
    keys('-l', 'zzz');
    await shows('› zzz_', 'the text typed right after Esc on the input line');
    keys('Escape');
    await waitUntil(() => screen().includes('› _'), 'Esc to clear the input line');
    keys('-l', '/question');
    keys('Enter');
    await shows('> 2. Postgres', 'the prompt reopened again');
    keys('Enter');
    const answered = await answeredCard(card.id);
    expect(answered.answer).toEqual({ [answered.questions[0].id]: { selected: ['Postgres'] } });
    await shows(`Answered ${card.id}: Postgres`, 'the resolution line');
  });

  it('a reply typed on the list answers the waiting card through the plain-text reply route', async () => {
    const first = await ask({ questions: [{ text: 'Where do the cards live?', options: ['SQLite', 'Postgres'] }] });
    await shows('Where do the cards live?');
    keys('-l', 'postgres');
    await shows('› postgres_');
    keys('Enter');
    await shows(`Answered ${first.id}: Postgres`, 'the first resolution line');
    await shows('No pending cards');
    const card = await ask({ questions: [{ text: 'Which platforms?', options: ['Linux', 'macOS', 'Windows'], multiSelect: true }] });
    await shows('Which platforms?');
    keys('-l', 'linux, 3');
    await shows('› linux, 3_');
    await shows(`Enter answers 1. Which platforms? (${card.id})`);
    keys('Enter');
    const answered = await answeredCard(card.id);
    expect(answered.answer).toEqual({ [answered.questions[0].id]: { selected: ['Linux', 'Windows'] } });
    expect(answered.answeredBy?.surface).toBe('cli');
    await shows(`Answered ${card.id}: Linux, Windows`, 'the resolution line');
    await shows('No pending cards');
    // the earlier resolution stays listed
    expect(screen()).toContain(`Answered ${first.id}: Postgres`);
  });

  it('reconnects after the relay restarts and reloads its pending cards', { timeout: 90_000 }, async () => {
    const port = new URL(relay.url).port;
    await within('the relay to stop', relay.close()); // keeps the data folder
    await shows('reconnecting', 'the lost connection on the screen');
    relay = await within('the relay to start again on its port', startTestRelay({}, relay.dataDir, port));
    const card = await ask({ questions: [{ text: 'Asked while away?', options: ['yes', 'no'] }] });
    await shows('Reconnected', 'the reconnect on the screen');
    await shows('Asked while away?', 'the reloaded card');
    keys('Enter');
    await shows('> 1. yes');
    keys('2');
    await answeredCard(card.id);
  });

  it('quits with q', async () => {
    keys('q');
    await waitUntil(() => tmux('display-message', '-p', '-t', session, '#{pane_dead}').trim() === '1', 'the tui to exit');
  });
});
