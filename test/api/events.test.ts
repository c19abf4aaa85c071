import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { readSse } from '../support/sse.js';

let relay: TestRelay;
beforeAll(async () => {
  relay = await startTestRelay();
});
afterAll(() => relay.stop());

it('streams card.created and card.updated for every committed change', async () => {
  const controller = new AbortController();
  const res = await relay.api('/api/events', { signal: controller.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
  const events = readSse(res);

  const created = (await (
    await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Ship it?', options: ['Yes', 'No'] }] } })
  ).json()) as Card;
  const first = (await events.next()).value!;
  expect(first.event).toBe('card.created');
  expect(JSON.parse(first.data)).toEqual(created);

  // A refused answer is not an event; the accepted one is.
  await relay.api(`/api/cards/${created.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Maybe'] } } } });
  const answered = (await (
    await relay.api(`/api/cards/${created.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Yes'] } } } })
  ).json()) as Card;
  const second = (await events.next()).value!;
  expect(second.event).toBe('card.updated');
  expect(JSON.parse(second.data)).toEqual(answered);

  const expiring = (await (
    await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Soon?' }], waitSeconds: 0.05 } })
  ).json()) as Card;
  expect((await events.next()).value!.event).toBe('card.created');
  const third = (await events.next()).value!;
  expect(third.event).toBe('card.updated');
  expect(JSON.parse(third.data)).toMatchObject({ id: expiring.id, status: 'expired' });
  controller.abort();
});
