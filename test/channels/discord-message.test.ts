import { describe, expect, it } from 'vitest';
import { closedOf, decodeComponentId, encodeComponentId, modalOf, postOf } from '../../src/channels/discord/message.js';
import { cardOf as card } from '../support/card-fixture.js';

// Golden: exactly what the relay sends Discord for each kind of card.

const none = { parse: [] };
const button = (label: string, tail: string | number, style = 1) => ({ type: 2, style, label, custom_id: `askrelay:c_0123456789abcdef:${tail}` });
const replyRow = { type: 1, components: [button('Reply…', 'reply', 2)] };
const database = card([{ header: 'Database', text: 'Which database?', options: [{ label: 'PostgreSQL (Recommended)', description: 'Scales' }, 'SQLite'] }]);

describe('discord message', () => {
  it('one question, one choice: buttons in a row, then Reply… on a row of its own', () => {
    expect(postOf(database)).toEqual({
      content: '**Question: Database**\n\nWhich database?\n- PostgreSQL (Recommended) — *Scales*\n\nTap an option, or use **Reply…** with your own answer.',
      components: [{ type: 1, components: [button('PostgreSQL (Recommended)', 0), button('SQLite', 1)] }, replyRow],
      allowed_mentions: none,
    });
  });

  it('multi-select falls back to numbered text and one Reply… button', () => {
    const c = card([{ text: 'Which colours?', options: ['Red', 'Green', 'Blue'], multiSelect: true }]);
    expect(postOf(c)).toEqual({
      content:
        "**Question**\n\nWhich colours? *(pick one or more)*\n1. Red\n2. Green\n3. Blue\n\nUse **Reply…** with an option's number or name (several separated by commas), or with your own answer.",
      components: [replyRow],
      allowed_mentions: none,
    });
  });

  it('several questions: numbered, keyed replies explained', () => {
    const c = card([
      { id: 'db', header: 'Database', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] },
      { id: 'port', header: 'Port', text: 'Which port?' },
    ]);
    expect(postOf(c)).toEqual({
      content:
        '**Question**\n\n**1. Database** — Which database?\n1. PostgreSQL\n2. SQLite\n\n**2. Port** — Which port?\n\nUse **Reply…** with one line per question, in order, or keyed like "1: …" or "db: …".',
      components: [replyRow],
      allowed_mentions: none,
    });
  });

  it('a free-text question and an approval', () => {
    expect(postOf(card([{ text: 'Anything else?' }]))).toEqual({
      content: '**Question**\n\nAnything else?\n\nUse **Reply…** with your answer.',
      components: [replyRow],
      allowed_mentions: none,
    });
    const approval = card([{ text: 'Start a claude session with "fix the build"?', options: ['Approve', 'Deny'], freeText: false }], { kind: 'approval', title: 'Start a session' });
    expect(postOf(approval)).toEqual({
      content: '**Approval needed: Start a session**\n\nStart a claude session with "fix the build"?\n\nTap an option.',
      components: [{ type: 1, components: [button('Approve', 0), button('Deny', 1)] }],
      allowed_mentions: none,
    });
  });

  it('the Reply… modal: title cut to 45 characters, one paragraph input of up to 4000', () => {
    expect(modalOf(database)).toEqual({
      custom_id: 'askrelay:c_0123456789abcdef:modal',
      title: 'Which database?',
      // A Label around the input (an Action Row in a modal is deprecated in Discord's change-log).
      components: [
        {
          type: 18,
          label: 'Your answer',
          component: {
            type: 4,
            custom_id: 'answer',
            style: 2,
            placeholder: "Answer with an option's number or name, or with your own answer.",
            max_length: 4000,
            required: true,
          },
        },
      ],
    });
    const long = card([{ text: `Which of these ${'very '.repeat(20)}long options?`, options: ['A', 'B'], multiSelect: true }]);
    expect(modalOf(long).title).toBe(`Which of these ${'very '.repeat(5)}very…`);
    expect([...modalOf(long).title]).toHaveLength(45);
    const several = card([{ id: 'db', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }, { id: 'port', text: 'Which port?' }], { title: 'Setup' });
    expect(modalOf(several).title).toBe('Question: Setup');
    expect(modalOf(several).components[0]).toMatchObject({ component: { placeholder: 'Answer with one line per question, in order, or keyed like "1: …" or "db: …".' } });
  });

  it('cuts long labels to 80 characters on buttons, keeping them whole in the text', () => {
    const long = `Use ${'x'.repeat(90)}`;
    const c = card([{ text: 'Which?', options: [long, 'Short'] }]);
    expect(postOf(c)).toEqual({
      content: `**Question**\n\nWhich?\n- ${long}\n\nTap an option, or use **Reply…** with your own answer.`,
      components: [{ type: 1, components: [button(`Use ${'x'.repeat(75)}…`, 0), button('Short', 1)] }, replyRow],
      allowed_mentions: none,
    });
    expect([...(postOf(c).components[0].components[0].label ?? '')]).toHaveLength(80);
  });

  it('20 options: four rows of five, Reply… on the fifth; beyond 25 buttons the card is text', () => {
    const twenty = card([{ text: 'Pick a number', options: Array.from({ length: 20 }, (_, i) => `n${i + 1}`) }]);
    const rows = postOf(twenty).components;
    expect(rows.map((r) => r.components.map((b) => b.label))).toEqual([
      ['n1', 'n2', 'n3', 'n4', 'n5'],
      ['n6', 'n7', 'n8', 'n9', 'n10'],
      ['n11', 'n12', 'n13', 'n14', 'n15'],
      ['n16', 'n17', 'n18', 'n19', 'n20'],
      ['Reply…'],
    ]);
    // The card model allows 20 options; a card built with more (25 + Reply…) still gets a valid message.
    const many = card([{ text: 'Pick a number', options: Array.from({ length: 20 }, (_, i) => `n${i + 1}`) }]);
    many.questions[0].options.push(...Array.from({ length: 5 }, (_, i) => ({ label: `n${i + 21}` })));
    expect(postOf(many).components).toEqual([replyRow]);
    expect(postOf(many).content).toContain('\n25. n25\n\nUse **Reply…** with an option\'s number or name, or with your own answer.');
    // Exactly 25 without free text still fits: five full rows.
    const exactly = { ...many, questions: [{ ...many.questions[0], freeText: false }] };
    expect(postOf(exactly).components.map((r) => r.components.length)).toEqual([5, 5, 5, 5, 5]);
  });

  it('a message over 2000 characters: texts are cut, the way to reply stays', () => {
    const c = card([{ text: 'x'.repeat(3000), options: ['A', 'B'], multiSelect: true }]);
    const { content } = postOf(c);
    expect(content.length).toBeLessThanOrEqual(2000);
    expect(content).toBe(`**Question**\n\n${'x'.repeat(499)}… *(pick one or more)*\n1. A\n2. B\n\nUse **Reply…** with an option's number or name (several separated by commas), or with your own answer.`);
  });

  describe('closed', () => {
    it('answered with a label: the question stays, the buttons go', () => {
      const answered = { ...database, status: 'answered' as const, answer: { q1: { selected: ['PostgreSQL (Recommended)'] } } };
      expect(closedOf(answered)).toEqual({
        content: '**Question: Database**\n\nWhich database?\n- PostgreSQL (Recommended) — *Scales*\n\n**Answered: PostgreSQL (Recommended)**',
        components: [],
        allowed_mentions: none,
      });
      const plain = card([{ text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }], { status: 'answered', answer: { q1: { selected: ['PostgreSQL'] } } });
      expect(closedOf(plain).content).toBe('**Question**\n\nWhich database?\n\n**Answered: PostgreSQL**');
    });

    it('answered in free text: the text is never echoed', () => {
      const typed = card([{ text: 'Anything else?' }], { status: 'answered', answer: { q1: { selected: [], text: 'my secret plan' } } });
      expect(closedOf(typed)).toEqual({ content: '**Question**\n\nAnything else?\n\n**Answered: a written answer**', components: [], allowed_mentions: none });
      const several = card(
        [
          { id: 'db', header: 'Database', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] },
          { id: 'port', header: 'Port', text: 'Which port?' },
        ],
        { status: 'answered', answer: { db: { selected: ['SQLite'] }, port: { selected: [], text: '5433' } } },
      );
      expect(closedOf(several).content).toBe(
        '**Question**\n\n**1. Database** — Which database?\n1. PostgreSQL\n2. SQLite\n\n**2. Port** — Which port?\n\n**Answered: Database: SQLite; Port: a written answer**',
      );
      expect(closedOf(several).content).not.toContain('5433');
    });

    it('expired, cancelled, skipped', () => {
      expect(closedOf({ ...database, status: 'expired' }).content).toBe('**Question: Database**\n\nWhich database?\n- PostgreSQL (Recommended) — *Scales*\n\n**Expired**');
      expect(closedOf({ ...database, status: 'cancelled' }).content.endsWith('\n\n**Cancelled**')).toBe(true);
      expect(closedOf({ ...database, status: 'skipped' })).toEqual({
        content: '**Question: Database**\n\nWhich database?\n- PostgreSQL (Recommended) — *Scales*\n\n**Skipped**',
        components: [],
        allowed_mentions: none,
      });
    });
  });

  it('component ids round-trip and stay within 100 characters', () => {
    for (const id of [
      { kind: 'option' as const, cardId: 'c_0123456789abcdef', option: 0 },
      { kind: 'option' as const, cardId: 'c_0123456789abcdef', option: 19 },
      { kind: 'reply' as const, cardId: 'c_0123456789abcdef' },
      { kind: 'modal' as const, cardId: 'c_0123456789abcdef' },
    ]) {
      const text = encodeComponentId(id);
      expect(text.length).toBeLessThanOrEqual(100);
      expect(decodeComponentId(text)).toEqual(id);
    }
    expect(encodeComponentId({ kind: 'option', cardId: 'c_0123456789abcdef', option: 3 })).toBe('askrelay:c_0123456789abcdef:3');
    for (const foreign of ['', 'askrelay:c_1', 'other:c_1:0', 'askrelay:c_1:other', 'askrelay:c 1:0', 'askrelay:c_1:1234']) {
      expect(decodeComponentId(foreign)).toBeUndefined();
    }
  });
});
