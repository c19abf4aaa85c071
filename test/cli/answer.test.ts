import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card, CardInput } from '../../src/cards/model.js';
import { runCli } from '../support/cli.js';
import { startRelayWithClock, startTestRelay, type TestRelay } from '../support/running-relay.js';

// `askrelay cards`, `askrelay answer` and `askrelay skip` as a person at a terminal runs them.

const scratch = mkdtempSync(join(tmpdir(), 'askrelay-cli-'));

const cli = (relay: TestRelay, args: string[]) =>
  runCli(args, { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: 'test-token-0123456789abcdef' }, scratch);

let relay: TestRelay;
const run = (...args: string[]) => cli(relay, args);

async function create(input: CardInput, on = relay): Promise<Card> {
  const res = await on.api('/api/cards', { method: 'POST', json: input });
  expect(res.status).toBe(201);
  return (await res.json()) as Card;
}

async function stored(id: string): Promise<Card> {
  return (await (await relay.api(`/api/cards/${id}`)).json()) as Card;
}

const database = () => create({ questions: [{ header: 'DB', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }], waitSeconds: 3600 });
const colors = () =>
  create({ questions: [{ text: 'Which colors?', options: ['Red', 'Green', 'Blue'], multiSelect: true }], waitSeconds: 3600 });

beforeAll(async () => {
  relay = await startTestRelay();
});
afterAll(async () => {
  await relay.stop();
  rmSync(scratch, { recursive: true, force: true });
});

describe('askrelay cards', { timeout: 60_000 }, () => {
  it('lists every pending card, past the 500 the API sends by default', async () => {
    const own = await startTestRelay();
    try {
      for (let i = 0; i < 501; i++) await own.relay.create({ questions: [{ text: `Question ${i}?` }] });
      const json = await cli(own, ['cards', '--json']);
      expect(json.code).toBe(0);
      expect((JSON.parse(json.stdout) as { cards: Card[] }).cards).toHaveLength(501);
    } finally {
      await own.stop();
    }
  });

  it('lists pending cards as a table, one row per question, and as JSON', async () => {
    const own = await startTestRelay();
    try {
      const empty = await cli(own, ['cards']);
      expect(empty).toMatchObject({ code: 0, stdout: 'No pending cards.\n' });

      const db = await create({ questions: [{ header: 'DB', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }], waitSeconds: 3600 }, own);
      const form = await create(
        {
          title: 'Setup',
          questions: [
            { id: 'name', text: 'Project name?' },
            { id: 'langs', header: 'Langs', text: 'Languages?', options: ['TS', 'Go', 'Rust'], multiSelect: true },
          ],
          waitSeconds: 90,
        },
        own,
      );
      const answered = await create({ questions: [{ text: 'Done?', options: ['Yes', 'No'] }] }, own);
      await own.api(`/api/cards/${answered.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Yes'] } } } });

      const table = await cli(own, ['cards']);
      expect(table.code).toBe(0);
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines).toHaveLength(4);
      expect(lines[0]).toMatch(/^ID +LEFT +HEADER +QUESTION +OPTIONS$/);
      expect(lines[1]).toMatch(new RegExp(`^${db.id} +59m \\d+s +DB +Which database\\? +1\\) PostgreSQL  2\\) SQLite$`));
      expect(lines[2]).toMatch(new RegExp(`^${form.id} +1m \\d+s +Setup +Project name\\? +\\(free text\\)$`));
      expect(lines[3]).toMatch(/^ +Langs +Languages\? +1\) TS  2\) Go  3\) Rust  \[several\]$/);
      expect(table.stdout).not.toContain(answered.id);

      const json = await cli(own, ['cards', '--json']);
      expect((JSON.parse(json.stdout) as { cards: Card[] }).cards.map((c) => c.id)).toEqual([db.id, form.id]);

      const done = await cli(own, ['cards', '--status', 'answered']);
      expect(done.stdout).toMatch(new RegExp(`${answered.id} +answered · sent +Done\\?`));

      const all = await cli(own, ['cards', '--status', 'all', '--json']);
      expect((JSON.parse(all.stdout) as { cards: Card[] }).cards).toHaveLength(3);

      const bad = await cli(own, ['cards', '--status', 'bogus']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toMatch(/^askrelay cards: status must be one of pending, answered/);
    } finally {
      await own.stop();
    }
  });
});

describe.concurrent('askrelay answer', { timeout: 60_000 }, () => {
  it('picks an option by its number', async () => {
    const card = await database();
    expect(await run('answer', card.id, '2')).toMatchObject({ code: 0, stdout: `Answered ${card.id}: SQLite\n` });
    expect(await stored(card.id)).toMatchObject({ answer: { q1: { selected: ['SQLite'] } }, answeredBy: { kind: 'human', surface: 'cli' } });
  });

  it('picks an option by its label, in any case', async () => {
    const card = await database();
    expect(await run('answer', card.id, 'postgresql')).toMatchObject({ code: 0, stdout: `Answered ${card.id}: PostgreSQL\n` });
    expect((await stored(card.id)).answer).toEqual({ q1: { selected: ['PostgreSQL'] } });
  });

  it('sends a value that matches no option as free text, and adds --text', async () => {
    const card = await database();
    const result = await run('answer', card.id, 'MySQL, if we must');
    expect(result).toMatchObject({ code: 0, stdout: `Answered ${card.id}: MySQL, if we must\n` });
    expect((await stored(card.id)).answer).toEqual({ q1: { selected: [], text: 'MySQL, if we must' } });

    const other = await database();
    expect((await run('answer', other.id, '1', '--text', 'for now')).code).toBe(0);
    expect((await stored(other.id)).answer).toEqual({ q1: { selected: ['PostgreSQL'], text: 'for now' } });
  });

  it('refuses a number that is no option\'s, or a label one letter off, saying how to send it with --text', async () => {
    // Issue 17: `askrelay answer <id> 7` on a two-option card answered "7".
    const card = await database();
    const seven = await run('answer', card.id, '7');
    expect(seven).toMatchObject({ code: 1, stdout: '' });
    expect(seven.stderr).toBe(
      `askrelay answer: "7" is not one of the options of "DB" (1. PostgreSQL, 2. SQLite); give a number from 1 to 2, an option's label, or mark your words as text. To send it as text: askrelay answer ${card.id} --text '7'.\n`,
    );
    expect((await run('answer', card.id, 'SQLit')).stderr).toContain('(did you mean "SQLite"?)');
    expect((await stored(card.id)).status).toBe('pending');

    const text = await run('answer', card.id, '--text', '7');
    expect(text).toMatchObject({ code: 0, stdout: `Answered ${card.id}: 7\n` });
    expect((await stored(card.id)).answer).toEqual({ q1: { selected: [], text: '7' } });

    const list = await colors();
    expect((await run('answer', list.id, '1', '7')).stderr).toContain('"7" is not one of the options of "Which colors?"');

    const two = await create({ questions: [{ header: 'DB', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }, { text: 'Port?' }], waitSeconds: 3600 });
    const slip = await run('answer', two.id, '7', '5432');
    expect(slip.stderr).toContain(`"7" is not one of the options of "DB" (1. PostgreSQL, 2. SQLite); give a number from 1 to 2, an option's label, or mark your words as text. To send a value as text, put it in quotes inside its line ('2: "7"').`);
    expect(await run('answer', two.id, '"7"', '5432')).toMatchObject({ code: 0 });
    expect((await stored(two.id)).answer).toEqual({ q1: { selected: [], text: '"7"' }, q2: { selected: [], text: '5432' } });
  });

  it('picks several options on a multi-select question, as values or comma-separated', async () => {
    const card = await colors();
    expect(await run('answer', card.id, '3', 'red')).toMatchObject({ code: 0, stdout: `Answered ${card.id}: Red, Blue\n` });
    expect((await stored(card.id)).answer).toEqual({ q1: { selected: ['Red', 'Blue'] } });

    const other = await colors();
    expect((await run('answer', other.id, 'Green,Blue')).code).toBe(0);
    expect((await stored(other.id)).answer).toEqual({ q1: { selected: ['Green', 'Blue'] } });
  });

  it('answers a card with several questions through --answer', async () => {
    const card = await create({
      questions: [
        { id: 'db', header: 'Database', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] },
        { id: 'langs', text: 'Languages?', options: ['TS', 'Go', 'Rust'], multiSelect: true },
        { id: 'name', text: 'Project name?' },
      ],
      waitSeconds: 3600,
    });
    // Changed with the reply parser: positional values are the reply's lines, so one line
    // for three questions names the first question left without an answer.
    const without = await run('answer', card.id, '1');
    expect(without.code).toBe(1);
    expect(without.stderr).toBe(
      'askrelay answer: Question "Languages?" has no answer; the reply has 1 line for 3 questions: give one line per question, or key each line ("Database: …") (questions: 1. Database, 2. Languages?, 3. Project name?).\n',
    );
    const both = await run('answer', card.id, '1', '--answer', 'langs=1');
    expect(both.code).toBe(1);
    expect(both.stderr).toContain(`askrelay answer: card ${card.id} has 3 questions; answer with one line per question`);

    const unknown = await run('answer', card.id, '--answer', 'nope=1');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('has no question "nope"');

    const result = await run('answer', card.id, '--answer', 'database=sqlite', '--answer', 'langs=1,rust', '-a', '3=askrelay');
    expect(result).toMatchObject({ code: 0, stdout: `Answered ${card.id}:\n  db: SQLite\n  langs: TS, Rust\n  name: askrelay\n` });
    expect((await stored(card.id)).answer).toEqual({
      db: { selected: ['SQLite'] },
      langs: { selected: ['TS', 'Rust'] },
      name: { selected: [], text: 'askrelay' },
    });
  });

  it('reads "1, 3" with the reply parser, and several questions as lines, keyed or in order', async () => {
    const card = await colors();
    expect(await run('answer', card.id, '1, 3')).toMatchObject({ code: 0, stdout: `Answered ${card.id}: Red, Blue\n` });

    const questions = {
      questions: [
        { id: 'db', header: 'Database', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] },
        { id: 'when', text: 'When?' },
      ],
      waitSeconds: 3600,
    };
    const inOrder = await create(questions);
    expect(await run('answer', inOrder.id, 'sqlite', '14:30')).toMatchObject({ code: 0, stdout: `Answered ${inOrder.id}:\n  db: SQLite\n  when: 14:30\n` });
    const keyed = await create(questions);
    expect((await run('answer', keyed.id, 'when = https://example.org/a,b\nDATABASE: 1')).code).toBe(0);
    expect((await stored(keyed.id)).answer).toEqual({ db: { selected: ['PostgreSQL'] }, when: { selected: [], text: 'https://example.org/a,b' } });
  });

  it('--json prints the answered card', async () => {
    const card = await database();
    const result = await run('answer', card.id, 'SQLite', '--json');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: card.id, status: 'answered', answer: { q1: { selected: ['SQLite'] } } });
  });

  it('exits 1 with the relay\'s message for an unknown card, a closed card or a refused answer', async () => {
    const missing = await run('answer', 'c_nope', '1');
    expect(missing).toMatchObject({ code: 1, stdout: '', stderr: 'askrelay answer: No card "c_nope".\n' });

    const card = await database();
    expect((await run('answer', card.id, '1', '2')).stderr).toContain('askrelay answer: Question "DB" takes one choice; 2 were picked.');

    const skipped = await database();
    await relay.api(`/api/cards/${skipped.id}/skip`, { method: 'POST' });
    const late = await run('answer', skipped.id, '1');
    expect(late.code).toBe(1);
    expect(late.stderr).toBe('askrelay answer: The card is skipped; it no longer takes answers.\n');

    const none = await run('answer', card.id);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('askrelay answer: give the answer');
  });

  it('--late answers a card that expired and says where the answer got to; without it, the refusal says to add --late', async () => {
    const { relay: own, clock } = await startRelayWithClock();
    try {
      const card = await create({ questions: [{ header: 'DB', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }], waitSeconds: 60 }, own);
      clock.advance(60_000);
      const refused = await cli(own, ['answer', card.id, '2']);
      expect(refused).toMatchObject({ code: 1, stderr: 'askrelay answer: The card is expired; it no longer takes answers. To answer it anyway, add --late.\n' });
      const late = await cli(own, ['answer', card.id, '2', '--late']);
      expect(late).toMatchObject({ code: 0, stdout: `Answered ${card.id} late: SQLite\nThe card had expired; the answer is sent (not received yet).\n` });
      const table = await cli(own, ['cards', '--status', 'expired']);
      expect(table.stdout).toMatch(new RegExp(`${card.id} +expired · late, sent +DB +Which database\\?`));
      const again = await cli(own, ['answer', card.id, '1', '--late']);
      expect(again).toMatchObject({ code: 1, stderr: 'askrelay answer: The card already has a late answer; it takes one.\n' });
    } finally {
      await own.stop();
    }
  });
});

describe.concurrent('askrelay skip', { timeout: 60_000 }, () => {
  it('skips a card', async () => {
    const card = await database();
    expect(await run('skip', card.id)).toMatchObject({ code: 0, stdout: `Skipped ${card.id}.\n` });
    expect((await stored(card.id)).status).toBe('skipped');
  });

  it('exits 1 for an unknown card or a missing id', async () => {
    expect(await run('skip', 'c_nope')).toMatchObject({ code: 1, stderr: 'askrelay skip: No card "c_nope".\n' });
    expect((await run('skip')).stderr).toContain('askrelay skip: give exactly one card id');
  });
});
