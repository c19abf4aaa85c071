import { describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { defaultAnswer } from '../../src/routing/default-answer.js';
import { escalated, humanSees, nextEscalation, routeCard } from '../../src/routing/match.js';
import { chatIn, parseRoutes, peopleIn, type Routes } from '../../src/routing/rules.js';

// The routes' pure half: reading rules (mistakes named by rule and field), matching a card,
// escalation steps, who sees a restricted card, and the default answer at expiry.

const card = (over: Partial<Card> = {}): Card => ({
  id: 'c_1', sessionId: 's_1', provider: 'claude', tool: 'AskUserQuestion', origin: 'native', kind: 'question', layout: 'steps',
  questions: [{ id: 'q1', text: 'Deploy?', options: [{ label: 'Yes' }, { label: 'No' }], multiSelect: false, freeText: true }],
  selectSeveral: false, relayMode: 'autopilot', status: 'pending', createdAt: '2026-12-02T10:00:00.000Z', expiresAt: '2026-12-02T18:00:00.000Z', ...over,
});

const routes = (value: unknown): Routes => {
  const parsed = parseRoutes(value);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed.routes;
};

describe('reading routes', () => {
  it('takes a document or a bare list', () => {
    const rule = { name: 'all', to: ['everyone'] };
    expect(routes({ routes: [rule] })).toEqual([{ ...rule, match: {} }]);
    expect(routes([rule])).toEqual([{ ...rule, match: {} }]);
  });

  it.each([
    [[{ name: 'payments', to: [] }], 'rule 1 (payments): to: name at least one target'],
    [[{ name: 'a', to: ['everyone'] }, { name: 'payments', to: ['Bob'] }], 'rule 2 (payments): to[0]: a target is a person\'s name, "everyone", or a chat channel (telegram, slack, discord, mattermost) with an optional ":<chat id>"'],
    [[{ name: 'p', to: ['ada'], escalate: [{ after: 'soon', to: ['bob'] }] }], 'rule 1 (p): escalate[0].after: "soon" is not a duration; write it like 8h, 90m, 2s, 500ms or 1h30m.'],
    [[{ name: 'p', to: ['ada'], match: { team: 'x' } }], 'rule 1 (p): match: Unrecognized key: "team"'],
    [[{ name: 'p', to: ['ada'], match: { labels: { Team: 'x' } } }], 'rule 1 (p): match.labels.Team: a label key is 1-32 lowercase letters, digits, _, - or ., starting with a letter'],
    [[{ name: 'p', to: ['ada'], onExpiry: { answer: ' ' } }], 'rule 1 (p): onExpiry.answer: the default answer is empty'],
    [[{ name: 'p', to: ['ada'] }, { name: 'p', to: ['bob'] }], 'rule 2 (p): name: another rule is already named "p"'],
    [[{ to: ['ada'] }], 'rule 1: name: Invalid input: expected string, received undefined'],
    [{ rules: [] }, 'routes: Invalid input: expected array, received undefined'],
  ])('names the rule and field of a mistake: %j', (value, message) => {
    expect(parseRoutes(value)).toEqual({ error: expect.stringContaining(message) });
  });

  it('tells people from chats', () => {
    const targets = ['ada', 'everyone', 'telegram', 'slack:C123', 'bob'];
    expect(peopleIn(targets)).toEqual(['ada', 'bob']);
    expect(chatIn(targets, 'telegram')).toBeNull();
    expect(chatIn(targets, 'slack')).toBe('C123');
    expect(chatIn(targets, 'discord')).toBeUndefined();
  });
});

describe('matching a card', () => {
  const rules = routes([
    { name: 'prod-approvals', match: { kind: 'approval', labels: { env: 'prod' } }, to: ['ada'], restrict: true },
    { name: 'payments', match: { labels: { team: 'payments' } }, to: ['bob', 'telegram:-100200'], escalate: [{ after: '1h', to: ['ada'] }, { after: '15m', to: ['slack'] }] },
    { name: 'copilot', match: { provider: ['copilot', 'openai'], engine: 'extension' }, to: ['cy'], onExpiry: { answer: 'No' } },
  ]);

  it('the first rule that matches wins; none leaves the card to everyone', () => {
    expect(routeCard(rules, card({ kind: 'approval', labels: { env: 'prod', team: 'payments' } }))).toEqual({ route: 'prod-approvals', routedTo: ['ada'], restricted: true });
    expect(routeCard(rules, card({ labels: { env: 'prod', team: 'payments' } })).route).toBe('payments');
    expect(routeCard(rules, card({ provider: 'openai', engine: 'extension' }))).toEqual({ route: 'copilot', routedTo: ['cy'], onExpiry: { answer: 'No' } });
    expect(routeCard(rules, card({ provider: 'openai' }))).toEqual({});
    expect(routeCard(rules, card())).toEqual({});
  });

  it('keeps the escalation steps on the card, in time order, and reaches them one at a time', () => {
    let routed = { ...card({ labels: { team: 'payments' } }), ...routeCard(rules, card({ labels: { team: 'payments' } })) };
    expect(routed.escalations).toEqual([{ at: '2026-12-02T10:15:00.000Z', to: ['slack'] }, { at: '2026-12-02T11:00:00.000Z', to: ['ada'] }]);
    expect(nextEscalation(routed)).toEqual({ index: 0, at: Date.parse('2026-12-02T10:15:00.000Z') });
    routed = escalated(routed, 0, '2026-12-02T10:15:01.000Z')!;
    expect(routed.routedTo).toEqual(['bob', 'telegram:-100200', 'slack']);
    expect(escalated(routed, 0, 'later')).toBeUndefined(); // reached already: nothing to write
    expect(nextEscalation(routed)?.index).toBe(1);
    routed = escalated(routed, 1, '2026-12-02T11:00:00.000Z')!;
    expect(routed.routedTo).toEqual(['bob', 'telegram:-100200', 'slack', 'ada']);
    expect(nextEscalation(routed)).toBeUndefined();
    expect(escalated({ ...routed, status: 'answered' }, 1, 'x')).toBeUndefined();
  });
});

describe('who sees a restricted card', () => {
  const restricted = card({ restricted: true, routedTo: ['ada', 'telegram:-100200'] });
  it.each([
    ['the operator', { id: 'operator', surface: 'web' }, true],
    ['a person it is routed to', { id: 'ada', surface: 'api' }, true],
    ['another person', { id: 'bob', surface: 'api' }, false],
    ['someone in the chat it was routed to', { id: 'telegram:42', surface: 'telegram' }, true],
    ['someone in another chat', { id: 'slack:U1', surface: 'slack' }, false],
  ])('%s: %s', (_, who, sees) => {
    expect(humanSees(who, restricted)).toBe(sees);
    expect(humanSees(who, { ...restricted, restricted: undefined })).toBe(true);
  });
});

describe('the default answer at expiry', () => {
  it('reads the reply as a pick, else as typed words, as the route', () => {
    expect(defaultAnswer(card({ route: 'r', onExpiry: { answer: 'No' } }))).toEqual({ answer: { q1: { selected: ['No'] } }, answeredBy: { kind: 'system', id: 'route:r', surface: 'route' } });
    expect(defaultAnswer(card({ route: 'r', onExpiry: { answer: 'hold off until Monday' } }))?.answer).toEqual({ q1: { selected: [], text: 'hold off until Monday' } });
  });

  it('none when the reply does not fit the card (it then expires as usual)', () => {
    const closed = card({ route: 'r', onExpiry: { answer: 'Maybe' }, questions: [{ id: 'q1', text: 'Deploy?', options: [{ label: 'Yes' }, { label: 'No' }], multiSelect: false, freeText: false }] });
    expect(defaultAnswer(closed)).toBeUndefined();
    expect(defaultAnswer(card())).toBeUndefined();
  });
});
