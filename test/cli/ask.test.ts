import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { serveConfig } from '../../src/config.js';
import { startRelay } from '../../src/start.js';
import { freePort, runCli, startCli } from '../support/cli.js';
import { startRelayWithClock, startTestRelay, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// `askrelay ask` as a script runs it: a child process against a real relay.

const scratch = mkdtempSync(join(tmpdir(), 'askrelay-cli-'));

const cli = (args: string[], env: Record<string, string | undefined>) => runCli(args, env, scratch);

let relay: TestRelay;
const env = () => ({ ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: 'test-token-0123456789abcdef' });
const ask = (...args: string[]) => cli(['ask', ...args], env());

/** The pending card asking `text`, once the child process has created it. */
function cardAsking(text: string, on: { api: TestRelay['api'] } = relay): Promise<Card> {
  return waitUntil(async () => {
    const { cards } = (await (await on.api('/api/cards?status=pending')).json()) as { cards: Card[] };
    return cards.find((c) => c.questions[0]?.text === text);
  }, `a card asking "${text}"`);
}

async function answer(id: string, answers: Card['answer']) {
  const res = await relay.api(`/api/cards/${id}/answer`, { method: 'POST', json: { answers } });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  relay = await startTestRelay();
});
afterAll(async () => {
  await relay.stop();
  rmSync(scratch, { recursive: true, force: true });
});

describe.concurrent('askrelay ask', { timeout: 60_000 }, () => {
  it('blocks until the card is answered, prints the label and exits 0', async () => {
    const running = ask('Which database?', '--choice', 'PostgreSQL', '--choice', 'SQLite', '--header', 'DB');
    const card = await cardAsking('Which database?');
    expect(card.questions[0]).toMatchObject({ header: 'DB', multiSelect: false, options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }] });
    await answer(card.id, { q1: { selected: ['PostgreSQL'] } });
    const run = await running;
    expect(run).toMatchObject({ code: 0, stdout: 'PostgreSQL\n' });
    expect(run.stderr).toContain(`waiting for an answer to card ${card.id}`);
  });

  it('prints picked labels and typed text joined with ", "', async () => {
    const running = ask('Which cache?', '-c', 'Redis', '-c', 'None');
    const card = await cardAsking('Which cache?');
    await answer(card.id, { q1: { selected: ['Redis'], text: 'but only in prod' } });
    expect(await running).toMatchObject({ code: 0, stdout: 'Redis, but only in prod\n' });
  });

  it('asks free text without choices, with a title', async () => {
    const running = ask('Name the release?', '--title', 'Release');
    const card = await cardAsking('Name the release?');
    expect(card.title).toBe('Release');
    expect(card.questions[0].options).toEqual([]);
    await answer(card.id, { q1: { selected: [], text: 'Aurora' } });
    expect(await running).toMatchObject({ code: 0, stdout: 'Aurora\n' });
  });

  it('--json prints the answered card', async () => {
    const running = ask('JSON please?', '--choice', 'Yes', '--choice', 'No', '--json');
    const card = await cardAsking('JSON please?');
    await answer(card.id, { q1: { selected: ['No'] } });
    const run = await running;
    expect(run.code).toBe(0);
    const printed = JSON.parse(run.stdout) as Card;
    expect(printed).toMatchObject({ id: card.id, status: 'answered', answer: { q1: { selected: ['No'] } } });
  });

  it('--multi lets several options be picked', async () => {
    const running = ask('Which colors?', '--multi', '-c', 'Red', '-c', 'Green', '-c', 'Blue');
    const card = await cardAsking('Which colors?');
    expect(card.questions[0].multiSelect).toBe(true);
    await answer(card.id, { q1: { selected: ['Blue', 'Red'] } });
    expect(await running).toMatchObject({ code: 0, stdout: 'Red, Blue\n' });
  });

  it('--choice "Label=Description" describes an option (\\= keeps an "=" in the label); --no-free-text takes no words', async () => {
    const running = ask('Which store?', '--choice', 'SQLite=No server', '-c', 'a\\=b= Assign =x', '-c', 'PostgreSQL', '-c', 'Plain=', '--no-free-text');
    const card = await cardAsking('Which store?');
    expect(card.questions[0]).toMatchObject({
      freeText: false,
      options: [{ label: 'SQLite', description: 'No server' }, { label: 'a=b', description: 'Assign =x' }, { label: 'PostgreSQL' }, { label: 'Plain' }],
    });
    expect(card.questions[0].options[2]).not.toHaveProperty('description');
    const words = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: [], text: 'Redis' } } } });
    expect(words.status).toBe(422);
    expect((await words.json()).error.code).toBe('free_text_not_allowed');
    await answer(card.id, { q1: { selected: ['a=b'] } });
    expect(await running).toMatchObject({ code: 0, stdout: 'a=b\n' });

    const open = ask('Free words welcome?', '-c', 'Yes');
    const openCard = await cardAsking('Free words welcome?');
    expect(openCard.questions[0].freeText).toBe(true);
    await answer(openCard.id, { q1: { selected: [], text: 'not sure' } });
    expect(await open).toMatchObject({ code: 0, stdout: 'not sure\n' });
  });

  it('exits 2 with a clear line when the card expires unanswered', async () => {
    const run = await ask('Anyone there?', '--choice', 'Yes', '--choice', 'No', '--wait', '500ms');
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/askrelay ask: nobody answered card c_\w+ before it expired at \S+Z\./);
  });

  it('--accept-late keeps waiting past the expiry and prints the late answer; the relay records it delivered to askrelay ask', async () => {
    const { relay: own, clock } = await startRelayWithClock();
    try {
      const running = startCli(['ask', 'Late?', '-c', 'Yes', '-c', 'No', '--wait', '1h', '--accept-late'], { ASKRELAY_URL: own.url, ASKRELAY_TOKEN: 'test-token-0123456789abcdef' }, scratch);
      const card = await cardAsking('Late?', own);
      clock.advance(3_600_000);
      await waitUntil(() => running.stderr().includes('Still waiting for a late answer (Ctrl+C to stop).'), 'the late wait');
      expect(running.stderr()).toContain(`askrelay ask: nobody answered card ${card.id} before it expired at ${card.expiresAt}. Still waiting`);
      const res = await own.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Yes'] } }, late: true } });
      expect(res.status).toBe(200);
      expect(await running.done).toMatchObject({ code: 0, stdout: 'Yes\n' });
      const stored = (await (await own.api(`/api/cards/${card.id}`)).json()) as Card;
      expect(stored).toMatchObject({ status: 'expired', delivery: { state: 'delivered', to: 'ask' } });
    } finally {
      await own.stop();
    }
  });

  it('--json still prints the expired card, and exits 2', async () => {
    const run = await ask('Expire as JSON?', '--wait', '300ms', '--json');
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'expired' });
  });

  it('exits 2 when the card is skipped', async () => {
    const running = ask('Skip me?', '-c', 'A', '-c', 'B');
    const card = await cardAsking('Skip me?');
    expect((await relay.api(`/api/cards/${card.id}/skip`, { method: 'POST' })).status).toBe(200);
    const run = await running;
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`askrelay ask: card ${card.id} was skipped; nobody answered.`);
  });

  it('exits 1 on bad flags, with the reason', async () => {
    const [unknown, none, multi, wait, two, strict] = await Promise.all([
      ask('Q?', '--bogus'),
      ask(),
      ask('Q?', '--multi', '--choice', 'Only'),
      ask('Q?', '--wait', 'soon'),
      ask('Q?', 'PostgreSQL'),
      ask('Q?', '--no-free-text'),
    ]);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain('--no-free-text needs at least one --choice');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^askrelay ask: Unknown option '--bogus'\. Run "askrelay ask --help"\./);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^askrelay ask: give the question/);
    expect(multi.code).toBe(1);
    expect(multi.stderr).toContain('--multi needs at least two --choice');
    expect(wait.code).toBe(1);
    expect(wait.stderr).toContain('--wait: "soon" is not a duration');
    expect(two.code).toBe(1);
    expect(two.stderr).toContain('one quoted argument');
  });

  it('exits 1 with the relay\'s message when the relay refuses the card', async () => {
    const run = await ask('Too long?', '--wait', '8d');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^askrelay ask: waitSeconds must be more than 0 and at most 7 days/);
  });

  it('exits 1 when the relay is unreachable', async () => {
    const port = await freePort();
    const run = await cli(['ask', 'Hello?'], { ASKRELAY_URL: `http://127.0.0.1:${port}`, ASKRELAY_TOKEN: 'test-token-0123456789abcdef' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^askrelay ask: cannot reach the relay at http://127\\.0\\.0\\.1:${port}/`));
  });

  it('says where it looked when there is no token, and reads the token file', async () => {
    const missing = await cli(['ask', 'Token?'], { ASKRELAY_URL: relay.url });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^askrelay ask: no relay token: set ASKRELAY_TOKEN.*\.askrelay\/token/);

    const data = join(scratch, 'data');
    rmSync(data, { recursive: true, force: true });
    mkdirSync(data);
    writeFileSync(join(data, 'token'), 'test-token-0123456789abcdef\n');
    const run = await cli(['cards'], { ASKRELAY_URL: relay.url, ASKRELAY_DATA: data });
    expect(run.code).toBe(0);

    const wrong = await cli(['cards'], { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: 'nope' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('the relay refused the token from ASKRELAY_TOKEN');
  });

  it('prints help for every command', async () => {
    const runs = await Promise.all(['ask', 'cards', 'answer', 'skip'].map((c) => cli([c, '--help'], {})));
    runs.forEach((run, i) => {
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`askrelay ${['ask', 'cards', 'answer', 'skip'][i]} —`);
    });
    const top = await cli(['--help'], {});
    expect(top.stdout).toMatch(/ask +ask a human/);
  });
});

describe('askrelay ask across a relay restart', { timeout: 60_000 }, () => {
  it('keeps waiting while the relay is down and gets the answer given after it is back', async () => {
    const data = mkdtempSync(join(tmpdir(), 'askrelay-restart-'));
    const config = serveConfig({ port: '0', data }, { ASKRELAY_TOKEN: 'test-token-0123456789abcdef' });
    const first = await startRelay(config);
    const url = first.url;
    const api = (path: string, init: RequestInit = {}) =>
      fetch(new URL(path, url), { ...init, headers: { authorization: 'Bearer test-token-0123456789abcdef', 'content-type': 'application/json' } });
    const asking = startCli(['ask', 'Survive a restart?', '-c', 'Yes', '-c', 'No'], { ASKRELAY_URL: url, ASKRELAY_TOKEN: 'test-token-0123456789abcdef' }, scratch);
    const running = asking.done;
    try {
      const card = await cardAsking('Survive a restart?', { api });
      await first.close();
      // Back only once the client has noticed it lost the relay.
      await waitUntil(() => asking.stderr().includes('lost the relay'), 'the client to notice the relay is gone');
      const second = await startRelay({ ...config, port: Number(new URL(url).port) });
      try {
        const res = await api(`/api/cards/${card.id}/answer`, { method: 'POST', body: JSON.stringify({ answers: { q1: { selected: ['Yes'] } } }) });
        expect(res.status).toBe(200);
        const run = await running;
        expect(run).toMatchObject({ code: 0, stdout: 'Yes\n' });
        expect(run.stderr).toContain('lost the relay');
        expect(run.stderr).toContain('the relay is back');
      } finally {
        await second.close();
      }
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
