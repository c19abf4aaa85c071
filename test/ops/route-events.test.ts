import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { OpsFields } from '../../src/ops/ops.js';
import type { FakeClock } from '../support/fake-clock.js';
import { startRelayWithClock, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// What the operator hears of routes (docs/operations.md): an escalation and a default answer
// are logged at info, with the card and the rule, never the reply's text.

let relay: TestRelay;
let clock: FakeClock;
const heard: [string, OpsFields][] = [];

beforeAll(async () => {
  ({ relay, clock } = await startRelayWithClock({ ASKRELAY_WAIT: '1h' }));
  relay.ops.subscribe((event, fields) => heard.push([event, fields]));
  const routes = [{ name: 'late', to: ['everyone'], escalate: [{ after: '10m', to: ['slack'] }], onExpiry: { answer: 'secret plan' } }];
  expect((await relay.api('/api/routes', { method: 'PUT', json: { routes } })).status).toBe(200);
});
afterAll(() => relay?.stop());

it('an escalation and a default answer are events of their own', async () => {
  const card = (await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Plan?' }] } })).json()) as Card;
  clock.advance(10 * 60_000);
  await waitUntil(() => heard.some(([e]) => e === 'route.escalated'), 'the escalation');
  clock.advance(50 * 60_000);
  await waitUntil(() => heard.some(([e]) => e === 'route.defaulted'), 'the default answer');
  expect(heard.filter(([e]) => e.startsWith('route.'))).toEqual([
    ['route.escalated', { cardId: card.id, sessionId: undefined, route: 'late', routedTo: 'everyone,slack' }],
    ['route.defaulted', { cardId: card.id, sessionId: undefined, route: 'late' }],
  ]);
  expect(JSON.stringify(heard)).not.toContain('secret plan');
});
