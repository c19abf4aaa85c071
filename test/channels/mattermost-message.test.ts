import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Card, Question } from '../../src/cards/model.js';
import {
  actionIdOf,
  actionsUrlOf,
  BUTTON_GRACE_MS,
  BUTTON_LABEL_CHARS,
  closedOf,
  MESSAGE_CHARS,
  optionOfActionId,
  postOf,
  signOption,
  verifyOption,
} from '../../src/channels/mattermost/message.js';
import { cardOf } from '../support/card-fixture.js';

// Golden payloads: exactly what askrelay sends Mattermost for each kind of card.

const SECRET = 'relay-secret';
const settings = { channel: 'chan4xq1k3ftgmeyzqw9b5o7pr', publicUrl: 'https://relay.example.com/', secret: SECRET };
const URL = 'https://relay.example.com/channels/mattermost/actions';
/** The fixture card's expiry (20:00) and the hour of grace after it. */
const EXPIRES = Date.parse('2026-11-30T21:00:00.000Z');
const sig = (cardId: string, option: number, expires = EXPIRES) =>
  createHmac('sha256', SECRET).update(`askrelay mattermost button\0${cardId}\0${option}\0${expires}`).digest('hex');

function question(fields: Partial<Question> & Pick<Question, 'text'>): Question {
  return { id: 'q1', options: [], multiSelect: false, freeText: true, ...fields };
}

/** Questions given exactly (no normalizing), on the shared test card. */
const card = (questions: Question[], fields: Partial<Card> = {}): Card => ({ ...cardOf([{ text: '-' }], fields), questions });

const database = card([
  question({ header: 'Database', text: 'Which database?', options: [{ label: 'PostgreSQL', description: 'The usual choice' }, { label: 'SQLite' }] }),
]);

const button = (cardId: string, option: number, name: string) => ({
  id: `option${option}`,
  name,
  type: 'button',
  integration: { url: URL, context: { cardId, option, expires: EXPIRES, sig: sig(cardId, option) } },
});

describe('Mattermost post payloads', () => {
  it('gives one single-choice question interactive buttons, descriptions in the text', () => {
    expect(postOf(database, settings)).toEqual({
      channel_id: 'chan4xq1k3ftgmeyzqw9b5o7pr',
      message: '**Question: Database**\n\nWhich database?\n- PostgreSQL — The usual choice',
      props: {
        attachments: [
          {
            text: 'Tap an option, or reply in this thread with your own answer.',
            actions: [button('c_0123456789abcdef', 0, 'PostgreSQL'), button('c_0123456789abcdef', 1, 'SQLite')],
          },
        ],
      },
    });
  });

  it('builds the integration URL whether or not the public URL ends with a slash', () => {
    expect(actionsUrlOf('https://relay.example.com/')).toBe(URL);
    expect(actionsUrlOf('https://relay.example.com')).toBe(URL);
    expect(actionsUrlOf('https://example.com/askrelay/')).toBe('https://example.com/askrelay/channels/mattermost/actions');
    const post = postOf(database, { ...settings, publicUrl: 'http://127.0.0.1:8080' });
    expect(post.props?.attachments[0].actions?.[0].integration.url).toBe('http://127.0.0.1:8080/channels/mattermost/actions');
  });

  it('writes a multi-select question as numbered text to reply to in the thread', () => {
    const colors = card([question({ text: 'Which colors?', options: [{ label: 'Red' }, { label: 'Green' }, { label: 'Blue' }], multiSelect: true })]);
    expect(postOf(colors, settings)).toEqual({
      channel_id: 'chan4xq1k3ftgmeyzqw9b5o7pr',
      message:
        '**Question**\n\nWhich colors? _(pick one or more)_\n1. Red\n2. Green\n3. Blue\n\n' +
        "Reply in this thread with an option's number or name (several separated by commas), or with your own answer.",
    });
  });

  it('writes several questions as numbered blocks with keyed-reply help', () => {
    const several = card([
      question({ id: 'db', header: 'DB', text: 'Which database?', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }] }),
      question({ id: 'cache', text: 'Which cache?', options: [{ label: 'Redis', description: 'in memory' }, { label: 'None' }], freeText: false }),
    ]);
    expect(postOf(several, settings)).toEqual({
      channel_id: 'chan4xq1k3ftgmeyzqw9b5o7pr',
      message:
        '**Question**\n\n' +
        '**1. DB** — Which database?\n1. PostgreSQL\n2. SQLite\n\n' +
        '**2.** Which cache?\n1. Redis — in memory\n2. None\n\n' +
        'Reply in this thread with one line per question, in order, or keyed like "1: …" or "db: …".',
    });
  });

  it('asks a free-text question for a reply in the thread', () => {
    const name = card([question({ text: 'What should the service be called?' })], { title: 'Naming' });
    expect(postOf(name, settings)).toEqual({
      channel_id: 'chan4xq1k3ftgmeyzqw9b5o7pr',
      message: '**Question: Naming**\n\nWhat should the service be called?\n\nReply in this thread with your answer.',
    });
  });

  it('shows an approval card with its buttons and no free text', () => {
    const approval = card([question({ text: 'Start a Claude session in /srv/app?', options: [{ label: 'Approve' }, { label: 'Deny' }], freeText: false })], {
      id: 'c_approvalapproval',
      kind: 'approval',
      title: 'Start session',
    });
    expect(postOf(approval, settings)).toEqual({
      channel_id: 'chan4xq1k3ftgmeyzqw9b5o7pr',
      message: '**Approval needed: Start session**\n\nStart a Claude session in /srv/app?',
      props: { attachments: [{ text: 'Tap an option.', actions: [button('c_approvalapproval', 0, 'Approve'), button('c_approvalapproval', 1, 'Deny')] }] },
    });
  });

  it('cuts long button labels (the full label stays in the text) and over-long posts', () => {
    const long = `${'Use the managed PostgreSQL service of our cloud provider, '.repeat(3)}with backups`;
    const post = postOf(card([question({ text: 'Which database?', options: [{ label: long }, { label: 'SQLite' }] })]), settings);
    const names = post.props!.attachments[0].actions!.map((a) => a.name);
    expect(names).toEqual([`${[...long].slice(0, BUTTON_LABEL_CHARS - 1).join('')}…`, 'SQLite']);
    expect([...names[0]].length).toBe(BUTTON_LABEL_CHARS);
    expect(post.message).toBe(`**Question**\n\nWhich database?\n- ${long}`);

    const huge = card(
      Array.from({ length: 10 }, (_, i) =>
        question({
          id: `q${i}`,
          text: `Question ${i} ${'x'.repeat(3990)}`,
          options: Array.from({ length: 20 }, (_, n) => ({ label: `Option ${n} ${'y'.repeat(150)}`, description: 'z'.repeat(1000) })),
        }),
      ),
    );
    const big = postOf(huge, settings).message;
    expect([...big].length).toBeLessThanOrEqual(MESSAGE_CHARS);
    expect(big.startsWith('**Question**\n\n**1.** Question 0 ')).toBe(true);
  });
});

describe('Mattermost closing edits', () => {
  it('keeps the question, drops the buttons and says what was picked', () => {
    const answered = { ...database, status: 'answered' as const, answer: { q1: { selected: ['PostgreSQL'] } } };
    expect(closedOf(answered)).toEqual({
      message: '**Question: Database**\n\nWhich database?\n- PostgreSQL — The usual choice\n\nAnswered: PostgreSQL',
      props: { attachments: [] },
    });
  });

  it('never repeats typed text', () => {
    const typed = { ...database, status: 'answered' as const, answer: { q1: { selected: [], text: 'MariaDB, because of the DBA team' } } };
    const closed = closedOf(typed);
    expect(closed).toEqual({
      message: '**Question: Database**\n\nWhich database?\n- PostgreSQL — The usual choice\n\nAnswered: a written answer',
      props: { attachments: [] },
    });
    expect(closed.message).not.toContain('MariaDB');
  });

  it('says Expired, Cancelled or Skipped', () => {
    const body = '**Question: Database**\n\nWhich database?\n- PostgreSQL — The usual choice\n\n';
    expect(closedOf({ ...database, status: 'expired' })).toEqual({ message: `${body}Expired`, props: { attachments: [] } });
    expect(closedOf({ ...database, status: 'cancelled' })).toEqual({ message: `${body}Cancelled`, props: { attachments: [] } });
    expect(closedOf({ ...database, status: 'skipped' })).toEqual({ message: `${body}Skipped`, props: { attachments: [] } });
  });

  it('closes a text card with its options still listed', () => {
    const colors = card([question({ text: 'Which colors?', options: [{ label: 'Red' }, { label: 'Green' }], multiSelect: true })], {
      status: 'answered',
      answer: { q1: { selected: ['Red', 'Green'] } },
    });
    expect(closedOf(colors)).toEqual({
      message: '**Question**\n\nWhich colors? _(pick one or more)_\n1. Red\n2. Green\n\nAnswered: Red, Green',
      props: { attachments: [] },
    });
  });
});

describe('Mattermost button ids and contexts', () => {
  it('makes alphanumeric action ids (Mattermost routes only [A-Za-z0-9]+) that decode back', () => {
    for (let option = 0; option < 20; option++) {
      const id = actionIdOf(option);
      expect(id).toMatch(/^[A-Za-z0-9]+$/);
      expect(optionOfActionId(id)).toBe(option);
    }
    expect(optionOfActionId('option_1')).toBeUndefined();
    expect(optionOfActionId('nope')).toBeUndefined();
  });

  it('signs the card, the option and the expiry together, and accepts only its own contexts', () => {
    expect(BUTTON_GRACE_MS).toBe(3_600_000);
    const context = { cardId: 'c_0123456789abcdef', option: 1, expires: EXPIRES, sig: signOption(SECRET, { cardId: 'c_0123456789abcdef', option: 1, expires: EXPIRES }) };
    expect(context.sig).toBe(sig('c_0123456789abcdef', 1));
    expect(verifyOption(SECRET, context)).toBe(true);
    expect(verifyOption(SECRET, { ...context, option: 0 })).toBe(false);
    expect(verifyOption(SECRET, { ...context, cardId: 'c_ffffffffffffffff' })).toBe(false);
    // A later expiry is a different button: it cannot be stretched.
    expect(verifyOption(SECRET, { ...context, expires: EXPIRES + 86_400_000 })).toBe(false);
    expect(verifyOption('another-secret', context)).toBe(false);
    expect(verifyOption(SECRET, { ...context, sig: 'not hex' })).toBe(false);
    expect(verifyOption(SECRET, { ...context, sig: '' })).toBe(false);
    // The signature of an earlier version (card and option only) no longer passes.
    const before = createHmac('sha256', SECRET).update('c_0123456789abcdef:1').digest('hex');
    expect(verifyOption(SECRET, { ...context, sig: before })).toBe(false);
  });
});
