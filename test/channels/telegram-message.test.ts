import { describe, expect, it } from 'vitest';
import { closedOf, decodeCallback, encodeCallback, otherPromptOf, postOf } from '../../src/channels/telegram/message.js';
import { cardOf as card } from '../support/card-fixture.js';

// Golden: exactly what the relay sends Telegram for each kind of card.

const database = card([{ header: 'Database', text: 'Which database?', options: [{ label: 'PostgreSQL (Recommended)', description: 'Scales' }, 'SQLite'] }]);

describe('telegram message', () => {
  it('one question, one choice: full-width buttons, one per row, then Other…', () => {
    expect(postOf(database)).toEqual({
      text: '<b>Question: Database</b>\n\nWhich database?\n• PostgreSQL (Recommended) — <i>Scales</i>\n\nTap an option, or reply to this message with your own answer.',
      parse_mode: 'HTML',
      link_preview_options: { is_disabled: true },
      reply_markup: {
        inline_keyboard: [
          [{ text: 'PostgreSQL (Recommended)', callback_data: 'a:c_0123456789abcdef:0' }],
          [{ text: 'SQLite', callback_data: 'a:c_0123456789abcdef:1' }],
          [{ text: 'Other…', callback_data: 'o:c_0123456789abcdef' }],
        ],
      },
    });
  });

  it('an agent\'s markdown goes as Telegram\'s HTML: code, emphasis, links, code blocks', () => {
    const c = card([{ text: 'Run `migrate` on **prod**? [Plan](https://example.com/plan)\n\n```\nALTER TABLE t ADD c int;\n```', options: [{ label: 'Yes', description: '_after_ the backup' }, 'No'] }]);
    expect(postOf(c).text).toBe(
      '<b>Question</b>\n\nRun <code>migrate</code> on <b>prod</b>? <a href="https://example.com/plan">Plan</a>\n\n<pre>ALTER TABLE t ADD c int;\n</pre>\n• Yes — <i><i>after</i> the backup</i>\n\nTap an option, or reply to this message with your own answer.',
    );
  });

  it('multi-select falls back to numbered text to reply to', () => {
    const c = card([{ text: 'Which colours?', options: ['Red', 'Green', 'Blue'], multiSelect: true }]);
    expect(postOf(c)).toEqual({
      text: '<b>Question</b>\n\nWhich colours? <i>(pick one or more)</i>\n1. Red\n2. Green\n3. Blue\n\nReply to this message with an option\'s number or name (several separated by commas), or with your own answer.',
      parse_mode: 'HTML',
      link_preview_options: { is_disabled: true },
    });
  });

  it('several questions: numbered, keyed replies explained', () => {
    const c = card([
      { id: 'db', header: 'Database', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] },
      { id: 'port', header: 'Port', text: 'Which port?' },
    ]);
    expect(postOf(c).text).toBe(
      '<b>Question</b>\n\n1. <b>Database</b> — Which database?\n1. PostgreSQL\n2. SQLite\n\n2. <b>Port</b> — Which port?\n\nReply to this message with one line per question, in order, or keyed like "1: …" or "db: …".',
    );
    expect(postOf(c).reply_markup).toBeUndefined();
  });

  it('a free-text question and an approval', () => {
    expect(postOf(card([{ text: 'Anything else?' }])).text).toBe('<b>Question</b>\n\nAnything else?\n\nReply to this message with your answer.');
    const approval = card([{ text: 'Start a claude session with "fix the build"?', options: ['Approve', 'Deny'], freeText: false }], { kind: 'approval', title: 'Start a session' });
    expect(postOf(approval)).toEqual({
      text: '<b>Approval needed: Start a session</b>\n\nStart a claude session with "fix the build"?\n\nTap an option.',
      parse_mode: 'HTML',
      link_preview_options: { is_disabled: true },
      reply_markup: {
        inline_keyboard: [[{ text: 'Approve', callback_data: 'a:c_0123456789abcdef:0' }], [{ text: 'Deny', callback_data: 'a:c_0123456789abcdef:1' }]],
      },
    });
  });

  it('escapes HTML and cuts long labels on buttons, keeping them whole in the text', () => {
    const long = `Use <b>${'x'.repeat(80)}</b>`;
    const post = postOf(card([{ text: 'A & B?', options: [long, 'No'] }]));
    expect(post.reply_markup!.inline_keyboard[0][0].text).toBe(`${long.slice(0, 63)}…`);
    expect(post.text).toContain('A &amp; B?');
    expect(post.text).toContain(`• Use &lt;b&gt;${'x'.repeat(80)}&lt;/b&gt;`);
    for (const [button] of post.reply_markup!.inline_keyboard) expect(Buffer.byteLength(button.callback_data)).toBeLessThanOrEqual(64);
  });

  it('a card id too long for 64 bytes of callback data is answered in text', () => {
    const post = postOf({ ...database, id: `c_${'f'.repeat(70)}` });
    expect(post.reply_markup).toBeUndefined();
    expect(post.text).toContain('1. PostgreSQL (Recommended) — <i>Scales</i>\n2. SQLite');
  });

  it('a message longer than 4096 characters is cut without breaking its HTML', () => {
    const c = card(Array.from({ length: 10 }, (_, i) => ({ text: `Q${i} ${'<&>'.repeat(400)}`, options: Array.from({ length: 20 }, (_, n) => ({ label: `opt ${n}`, description: 'd'.repeat(300) })) })));
    const { text } = postOf(c);
    expect(text.length).toBeLessThanOrEqual(4096);
    expect(text).not.toMatch(/&[a-z]*…|<[^>]*…/);
    expect(text.endsWith('or keyed like "1: …" or "q1: …".')).toBe(true);
  });

  it('closed: the question stays, the buttons go, the outcome is added; typed text is never repeated', () => {
    const answered = { ...database, status: 'answered' as const, answer: { q1: { selected: ['SQLite'] } } };
    expect(closedOf(answered)).toEqual({
      text: '<b>Question: Database</b>\n\nWhich database?\n• PostgreSQL (Recommended) — <i>Scales</i>\n\n<b>Answered: SQLite</b>',
      parse_mode: 'HTML',
      link_preview_options: { is_disabled: true },
      reply_markup: { inline_keyboard: [] },
    });
    const typed = closedOf({ ...database, status: 'answered', answer: { q1: { selected: [], text: 'MariaDB, password hunter2' } } });
    expect(typed.text.endsWith('<b>Answered: a written answer</b>')).toBe(true);
    expect(typed.text).not.toContain('hunter2');
    expect(closedOf({ ...database, status: 'expired' }).text.endsWith('<b>Expired</b>')).toBe(true);
    expect(closedOf({ ...database, status: 'cancelled' }).text.endsWith('<b>Cancelled</b>')).toBe(true);
    expect(closedOf({ ...database, status: 'skipped' }).text.endsWith('<b>Skipped</b>')).toBe(true);
  });

  it('Other… asks for a forced reply naming the person', () => {
    expect(otherPromptOf(database, { id: 42, first_name: 'Ada <3' })).toEqual({
      text: '<a href="tg://user?id=42">Ada &lt;3</a>, type your answer to “Which database?” as a reply to this message.',
      parse_mode: 'HTML',
      reply_markup: { force_reply: true, selective: true, input_field_placeholder: 'Your answer' },
    });
  });

  it('callback data round-trips and refuses anything else', () => {
    for (const data of [{ kind: 'option', cardId: 'c_1', option: 3 }, { kind: 'other', cardId: 'c_1' }] as const) {
      expect(decodeCallback(encodeCallback(data))).toEqual(data);
    }
    expect(decodeCallback('a:c_1:x')).toBeUndefined();
    expect(decodeCallback('hello')).toBeUndefined();
  });
});
