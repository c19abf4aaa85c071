import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { leftText } from '../../src/cli/format.js';
import { remaining } from '../../src/cli/tui/render.js';
import {
  answeredBy, approvalText, capitalize, closedByText, deliveryText, describeAnswer, describeClosed, fmtClock, fmtLeft, fmtStarted, fmtTime, parseRoute, shortId,
} from '../../src/server/web/format.js';

// The page's words and times without a browser: what a card's countdown, closed line and
// badges say, how an approval's text splits, and what an address shows.

const question = (id: string, header?: string) => ({ id, header, text: `${id}?`, options: [] });

describe('the countdown', () => {
  it('counts seconds, then minutes, hours and days', () => {
    expect(fmtLeft(0)).toBe('expiring');
    expect(fmtLeft(-5000)).toBe('expiring');
    expect(fmtLeft(999)).toBe('0s left');
    expect(fmtLeft(59_999)).toBe('59s left');
    expect(fmtLeft(60_000)).toBe('1m 0s left');
    expect(fmtLeft(3_599_000)).toBe('59m 59s left');
    expect(fmtLeft(3_600_000)).toBe('1h 0m left');
    expect(fmtLeft(8 * 3_600_000 - 1000)).toBe('7h 59m left');
    expect(fmtLeft(23 * 3_600_000 + 59 * 60_000)).toBe('23h 59m left');
    expect(fmtLeft(49 * 3_600_000)).toBe('2d 1h left');
  });

  it('says what the terminal UI and `askrelay cards` say, for any time left', () => {
    const card = (ms: number) => ({ status: 'pending', expiresAt: new Date(ms).toISOString() }) as Card;
    fc.assert(
      fc.property(fc.integer({ min: -10_000, max: 10 * 86_400_000 }), (ms) => {
        expect(remaining(card(ms), 0)).toBe(fmtLeft(ms));
        expect(leftText(card(ms), 0)).toBe(fmtLeft(ms).replace(/ left$/, ''));
      }),
    );
  });
});

describe('times', () => {
  it('a session started today shows the clock; another day, the date too; nonsense as it came', () => {
    const now = new Date(2026, 5, 10, 15, 0);
    const today = new Date(2026, 5, 10, 9, 30).toISOString();
    const yesterday = new Date(2026, 5, 9, 9, 30).toISOString();
    expect(fmtStarted(today, now)).toBe(fmtClock(today));
    expect(fmtStarted(yesterday, now)).toBe(fmtTime(yesterday));
    expect(fmtStarted(yesterday, now)).not.toBe(fmtClock(yesterday));
    expect(fmtStarted('not a date', now)).toBe('not a date');
    expect(fmtTime('not a date')).toBe('not a date');
    expect(fmtClock('not a date')).toBe('not a date');
  });

  it('short ids and capitals', () => {
    expect(shortId('s_3dfac9e81234')).toBe('s_3dfac9');
    expect(capitalize('answered')).toBe('Answered');
  });
});

describe('a closed card', () => {
  it('says how it closed, with the answer when there is one', () => {
    const one = { status: 'answered', questions: [question('db')], answer: { db: { selected: ['Postgres'], text: 'v16' } } };
    expect(describeClosed(one)).toBe('Answered: Postgres + “v16”');
    expect(describeClosed({ status: 'expired', questions: [] })).toBe('Expired: nobody answered in time');
    expect(describeClosed({ status: 'cancelled', questions: [] })).toBe('Cancelled: the session stopped');
    expect(describeClosed({ status: 'skipped', questions: [] })).toBe('Skipped');
  });

  it('names each question of several by its header, else its id', () => {
    const card = {
      questions: [question('db', 'Database'), question('cache'), question('unanswered')],
      answer: { db: { selected: ['Postgres', 'SQLite'] }, cache: { selected: [], text: 'none' } },
    };
    expect(describeAnswer(card)).toBe('Database: Postgres, SQLite; cache: “none”');
  });

  it('is badged when someone else answered: another session\'s agent, a named agent, a chat user; never you', () => {
    const closed = (status: string, answeredBy: unknown) => ({ status, answeredBy, questions: [] });
    expect(answeredBy(closed('answered', { kind: 'human', id: 'operator', surface: 'web' }))).toBeNull();
    expect(answeredBy(closed('pending', { kind: 'agent', id: 's_3dfac9e81234', surface: 'relay-tool' }))).toBeNull();
    expect(answeredBy(closed('answered', undefined))).toBeNull();
    expect(answeredBy(closed('answered', { kind: 'agent', id: 's_3dfac9e81234', surface: 'relay-tool' }))).toEqual({
      kind: 'agent',
      label: 'answered by agent s_3dfac9 (relay-tool)',
      title: 'Answered by the agent of session s_3dfac9e81234, through relay-tool, not by you',
      surface: 'relay-tool',
      agentId: 's_3dfac9e81234',
      session: true,
    });
    expect(answeredBy(closed('skipped', { kind: 'agent', id: 'reviewer', surface: 'mcp' }))).toMatchObject({
      label: 'skipped by agent reviewer (mcp)',
      title: 'Skipped by the agent “reviewer”, through mcp, not by you',
      session: false,
    });
    expect(answeredBy(closed('answered', { kind: 'human', id: 'telegram:42', surface: 'telegram' }))).toEqual({
      kind: 'channel',
      label: 'answered in telegram (42)',
      title: 'Answered in telegram by user 42',
      surface: 'telegram',
      user: '42',
    });
  });
});

describe('an approval\'s text', () => {
  it('keeps its first paragraph as prose and the rest verbatim', () => {
    const card = { kind: 'approval', tool: 'permission:Bash' };
    expect(approvalText(card, 'Run this command?\n\n  rm -rf build\n  make  \n')).toEqual({ lead: 'Run this command?', code: '  rm -rf build\n  make' });
    // No lead paragraph: all of it verbatim.
    expect(approvalText(card, 'git push --force')).toEqual({ lead: '', code: 'git push --force' });
  });

  it('is prose for a question, and for a one-line approval of another tool', () => {
    expect(approvalText({ kind: 'question' }, 'Which one?\n\nA or B')).toBeNull();
    expect(approvalText({ kind: 'approval', tool: 'deploy' }, 'Deploy now?')).toBeNull();
    expect(approvalText({ kind: 'approval', tool: 'ExitPlanMode' }, 'The plan')).toEqual({ lead: '', code: 'The plan' });
    expect(approvalText({ kind: 'approval', tool: 'deploy' }, 'Deploy?\nto prod')).toEqual({ lead: '', code: 'Deploy?\nto prod' });
  });
});

describe('the address', () => {
  it('shows cards by default, a linked card, the sessions or one session', () => {
    expect(parseRoute('')).toEqual({ view: 'cards', linkedCard: null, sessionId: null });
    expect(parseRoute('cards')).toEqual({ view: 'cards', linkedCard: null, sessionId: null });
    expect(parseRoute('card=c_12')).toEqual({ view: 'cards', linkedCard: 'c_12', sessionId: null });
    expect(parseRoute('sessions')).toEqual({ view: 'sessions', linkedCard: null, sessionId: null });
    expect(parseRoute('sessions/s_1%2F2')).toEqual({ view: 'sessions', linkedCard: null, sessionId: 's_1/2' });
    expect(parseRoute('sessions/%E0%A4%A')).toEqual({ view: 'sessions', linkedCard: null, sessionId: '%E0%A4%A' });
    expect(parseRoute('sessionsx')).toEqual({ view: 'cards', linkedCard: null, sessionId: null });
  });
});

describe('who closed a card, and when (Recent)', () => {
  const clock = (iso: string) => iso.slice(11, 16);
  const closed = (extra: Record<string, unknown>) => ({ questions: [], closedAt: '2026-12-01T10:42:00Z', status: 'answered', ...extra });

  it('names you and where, another agent and its route, or a chat user, with the time', () => {
    expect(closedByText(closed({ answeredBy: { kind: 'human', id: 'operator', surface: 'web' } }), clock)).toBe('answered by you on the page, 10:42');
    expect(closedByText(closed({ answeredBy: { kind: 'human', id: 'operator', surface: 'cli' } }), clock)).toBe('answered by you in the terminal, 10:42');
    expect(closedByText(closed({ status: 'skipped', answeredBy: { kind: 'human', id: 'operator', surface: 'api' } }), clock)).toBe('skipped by you through the API, 10:42');
    expect(closedByText(closed({ answeredBy: { kind: 'agent', id: 's_8c29ab12ffee0011', surface: 'relay-tool' } }), clock)).toBe('answered by s_8c29ab through the relay tool, 10:42');
    expect(closedByText(closed({ answeredBy: { kind: 'agent', id: 'reviewer', surface: 'mcp' } }), clock)).toBe('answered by reviewer through MCP, 10:42');
    expect(closedByText(closed({ answeredBy: { kind: 'human', id: 'telegram:42', surface: 'telegram' } }), clock)).toBe('answered by 42 in telegram, 10:42');
  });

  it('says nobody answered an expired card, and when a cancelled one closed', () => {
    expect(closedByText(closed({ status: 'expired' }), clock)).toBe('nobody answered; expired 10:42');
    expect(closedByText(closed({ status: 'cancelled' }), clock)).toBe('cancelled 10:42: the session stopped');
    expect(closedByText({ questions: [], status: 'expired' }, clock)).toBe('nobody answered; expired');
  });
});

describe('where an answer got to', () => {
  const clock = (iso: string) => iso.slice(11, 16);
  const base = { questions: [{ id: 'q1', text: 'Which DB?', options: [] }] } as unknown as Card;
  const at = '2026-12-01T14:09:00.000Z';

  it('says sent, delivered (to whom) or not delivered, and nothing before an answer', () => {
    expect(deliveryText(base, clock)).toBe('');
    expect(deliveryText({ ...base, delivery: { state: 'sent', at } }, clock)).toBe('Sent; the agent has not taken it yet.');
    expect(deliveryText({ ...base, delivery: { state: 'delivered', at, to: 'session' } }, clock)).toBe('Delivered to the session, 14:09.');
    expect(deliveryText({ ...base, delivery: { state: 'delivered', at, to: 'mcp' } }, clock)).toBe('Delivered to the MCP client, 14:09.');
    expect(deliveryText({ ...base, delivery: { state: 'undelivered', at } }, clock)).toBe('Not delivered: nobody was waiting for it.');
  });

  it('names a late answer first', () => {
    const late = { ...base, status: 'expired', lateAnswer: { answer: { q1: { selected: ['SQLite'], text: 'for now' } }, answeredBy: { kind: 'human', id: 'operator', surface: 'web' }, lateAt: at } } as Card;
    expect(deliveryText({ ...late, delivery: { state: 'delivered', at, to: 'ask' } }, clock)).toBe('Late answer: SQLite + “for now”. Delivered to askrelay ask, 14:09.');
  });
});
