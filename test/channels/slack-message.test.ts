import { describe, expect, it } from 'vitest';
import { closedOf, decodeAction, encodeValue, postOf } from '../../src/channels/slack/message.js';
import { cardOf as card } from '../support/card-fixture.js';

// Golden: exactly what the relay sends Slack (chat.postMessage / chat.update, less the
// channel and ts) for each kind of card.

const plain = (text: string) => ({ type: 'plain_text', text, emoji: true });
const mrkdwn = (text: string) => ({ type: 'mrkdwn', text });
const header = (text: string) => ({ type: 'header', text: plain(text) });
const section = (text: string) => ({ type: 'section', text: mrkdwn(text) });
const context = (text: string) => ({ type: 'context', elements: [mrkdwn(text)] });
const button = (label: string, n: number) => ({ type: 'button', text: plain(label), action_id: `askrelay_opt_${n}`, value: `c_0123456789abcdef:${n}` });

const database = card([{ header: 'Database', text: 'Which database?', options: [{ label: 'PostgreSQL (Recommended)', description: 'Scales' }, 'SQLite'] }]);

describe('slack message', () => {
  it('one question, one choice: Block Kit buttons, descriptions in the text, free text in the thread', () => {
    expect(postOf(database)).toEqual({
      text: 'Question: Database\nWhich database?',
      blocks: [
        header('Question: Database'),
        section('Which database?\n• PostgreSQL (Recommended) — Scales'),
        { type: 'actions', elements: [button('PostgreSQL (Recommended)', 0), button('SQLite', 1)] },
        context('Tap an option, or reply in this thread with your own answer.'),
      ],
    });
  });

  it('an agent\'s markdown goes as mrkdwn: code, emphasis, links, lists', () => {
    const c = card([{ text: 'Run `npm run migrate` on **prod**? See [the plan](https://example.com/plan).\n\n- adds a column\n- no downtime', options: [{ label: 'Yes', description: '_after_ the backup' }, 'No'] }]);
    expect(postOf(c).blocks[1]).toEqual(
      section('Run `npm run migrate` on *prod*? See <https://example.com/plan|the plan>.\n\n• adds a column\n• no downtime\n• Yes — _after_ the backup'),
    );
  });

  it('multi-select falls back to numbered text, answered in the thread', () => {
    const c = card([{ text: 'Which colours?', options: ['Red', 'Green', 'Blue'], multiSelect: true }]);
    expect(postOf(c)).toEqual({
      text: 'Question\nWhich colours?',
      blocks: [
        header('Question'),
        section('Which colours? _(pick one or more)_\n*1.* Red\n*2.* Green\n*3.* Blue'),
        context("Reply in this thread with an option's number or name (several separated by commas), or with your own answer."),
      ],
    });
  });

  it('several questions: one numbered section each, keyed replies explained', () => {
    const c = card(
      [
        { id: 'db', header: 'Database', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] },
        { id: 'port', header: 'Port', text: 'Which port?' },
      ],
      { title: 'Set-up' },
    );
    expect(postOf(c)).toEqual({
      text: 'Question: Set-up\nWhich database? (+1 more)',
      blocks: [
        header('Question: Set-up'),
        section('*1. Database*\nWhich database?\n*1.* PostgreSQL\n*2.* SQLite'),
        section('*2. Port*\nWhich port?'),
        context('Reply in this thread with one line per question, in order, or keyed like "1: …" or "db: …".'),
      ],
    });
  });

  it('a free-text question: no buttons, reply in the thread', () => {
    const c = card([{ text: 'What should the release be called?' }]);
    expect(postOf(c)).toEqual({
      text: 'Question\nWhat should the release be called?',
      blocks: [header('Question'), section('What should the release be called?'), context('Reply in this thread with your answer.')],
    });
  });

  it('an approval card: its title, the request, Approve / Deny buttons', () => {
    const c = card(
      [
        {
          id: 'approve',
          header: 'Approve?',
          text: 'The agent of session s_1 wants to start a claude session:\n> refactor <the> parser & tests',
          options: [{ label: 'Approve', description: 'Let it happen now' }, { label: 'Deny' }],
        },
      ],
      { kind: 'approval', title: 'Start a session' },
    );
    expect(postOf(c)).toEqual({
      text: 'Approval needed: Start a session\nThe agent of session s_1 wants to start a claude session:\n&gt; refactor &lt;the&gt; parser &amp; tests',
      blocks: [
        header('Approval needed: Start a session'),
        section('The agent of session s_1 wants to start a claude session:\n&gt; refactor &lt;the&gt; parser &amp; tests\n• Approve — Let it happen now'),
        { type: 'actions', elements: [button('Approve', 0), button('Deny', 1)] },
        context('Tap an option, or reply in this thread with your own answer.'),
      ],
    });
  });

  it("clips to Slack's limits: 75-character buttons (full label kept in the text), 150-character header, 25 buttons per actions block", () => {
    const long = `${'x'.repeat(80)} end`;
    const many = Array.from({ length: 27 }, (_, i) => `Option ${i + 1}`);
    // The relay allows 20 options today; built by hand, a longer list still fits Slack.
    const base = card([{ text: 'Pick one', options: ['a', 'b'] }], { title: 't'.repeat(200) });
    const c = { ...base, questions: [{ ...base.questions[0], options: [long, ...many.slice(1)].map((label) => ({ label })) }] };
    const { blocks } = postOf(c);
    expect(blocks[0]).toEqual(header(`Question: ${'t'.repeat(139)}…`));
    expect(blocks[1]).toEqual(section(`Pick one\n• ${long}`));
    expect(blocks[2]).toEqual({ type: 'actions', elements: [button(`${'x'.repeat(74)}…`, 0), ...many.slice(1, 25).map((label, i) => button(label, i + 1))] });
    expect(blocks[3]).toEqual({ type: 'actions', elements: [button('Option 26', 25), button('Option 27', 26)] });
    // Section text is cut to 3,000 characters without leaving half an entity behind.
    const huge = postOf(card([{ text: `${'a'.repeat(2990)} & & & & & & &`, options: ['Yes', 'No'] }]));
    const text = (huge.blocks[1] as { text: { text: string } }).text.text;
    expect([...text].length).toBeLessThanOrEqual(3000);
    expect(text).toBe(`${'a'.repeat(2990)} &amp; …`);
    // Emoji are two UTF-16 units each; Slack's docs do not say which unit they count, so the cut fits both.
    const emoji = postOf(card([{ text: '😀'.repeat(2000), options: ['Yes', 'No'] }]));
    const emojiText = (emoji.blocks[1] as { text: { text: string } }).text.text;
    expect(emojiText.length).toBeLessThanOrEqual(3000);
    expect(emojiText).toBe(`${'😀'.repeat(1499)}…`);
  });

  it('closed: the question stays, the buttons go, "Answered: PostgreSQL" is added', () => {
    const answered = closedOf({ ...database, status: 'answered', answer: { q1: { selected: ['PostgreSQL (Recommended)'] } } });
    expect(answered).toEqual({
      text: 'Answered: PostgreSQL (Recommended)\nQuestion: Database\nWhich database?',
      blocks: [header('Question: Database'), section('Which database?'), section('*Answered: PostgreSQL (Recommended)*')],
    });
    const sqlite = card([{ text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }], { status: 'answered', answer: { q1: { selected: ['PostgreSQL'] } } });
    expect(closedOf(sqlite).blocks.at(-1)).toEqual(section('*Answered: PostgreSQL*'));
  });

  it('closed with free text: the typed words are never echoed', () => {
    const c = closedOf({ ...database, status: 'answered', answer: { q1: { selected: [], text: 'MariaDB, password hunter2' } } });
    expect(c).toEqual({
      text: 'Answered: a written answer\nQuestion: Database\nWhich database?',
      blocks: [header('Question: Database'), section('Which database?'), section('*Answered: a written answer*')],
    });
    expect(JSON.stringify(c)).not.toContain('hunter2');
  });

  it('closed: expired, cancelled, skipped; several questions keep their numbers', () => {
    for (const [status, line] of [
      ['expired', 'Expired'],
      ['cancelled', 'Cancelled'],
      ['skipped', 'Skipped'],
    ] as const) {
      expect(closedOf({ ...database, status })).toEqual({
        text: `${line}\nQuestion: Database\nWhich database?`,
        blocks: [header('Question: Database'), section('Which database?'), section(`*${line}*`)],
      });
    }
    const several = card(
      [
        { id: 'db', header: 'Database', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] },
        { id: 'port', text: 'Which port?' },
      ],
      { status: 'answered', answer: { db: { selected: ['SQLite'] }, port: { selected: [], text: '5432' } } },
    );
    expect(closedOf(several)).toEqual({
      text: 'Answered: Database: SQLite; port: a written answer\nQuestion\nWhich database? (+1 more)',
      blocks: [header('Question'), section('*1. Database*\nWhich database?'), section('*2.* Which port?'), section('*Answered: Database: SQLite; port: a written answer*')],
    });
  });

  it('button values round-trip; actions that are not ours are ignored', () => {
    expect(encodeValue('c_0123456789abcdef', 3)).toBe('c_0123456789abcdef:3');
    for (const option of [0, 7, 19]) {
      expect(decodeAction({ action_id: `askrelay_opt_${option}`, value: encodeValue('c_0123456789abcdef', option) })).toEqual({ cardId: 'c_0123456789abcdef', option });
    }
    expect(decodeAction({ action_id: 'someone_elses_button', value: 'c_0123456789abcdef:1' })).toBeUndefined();
    expect(decodeAction({ action_id: 'askrelay_opt_1' })).toBeUndefined();
    expect(decodeAction({ action_id: 'askrelay_opt_1', value: 'c_0123:x' })).toBeUndefined();
    // Every button's value decodes back to its own option.
    for (const b of (postOf(database).blocks[2] as { elements: { action_id: string; value: string }[] }).elements) {
      expect(decodeAction(b)?.option).toBe(Number(b.action_id.replace('askrelay_opt_', '')));
    }
  });
});
