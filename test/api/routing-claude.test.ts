import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import type { AuditEntry } from '../../src/store/audit-store.js';
import { lastToolResult, startAnthropicServer, toolNames, type AnthropicServer, type MessagesRequest, type ScriptedReply } from '../fakes/anthropic-server.js';
import { claudeRelayEnv, dbQuestion } from '../providers/claude-fixtures.js';
import type { FakeClock } from '../support/fake-clock.js';
import { startRelayWithClock, type TestRelay } from '../support/running-relay.js';
import { waitUntil } from '../support/wait-until.js';

// A route's default at expiry for a Claude session (docs/routing.md): nobody answers the
// AskUserQuestion card within its wait, the route answers it with its plain-text reply as
// "route:<name>", and Claude's model reads an ordinary answer in Claude's own words (golden),
// while the audit log says it was the rule's default. Two nodes: whichever node's timer
// comes first answers it.

const GOLDEN = 'Your questions have been answered: "Which database?"="SQLite". You can now continue with these answers in mind.';
let fake: AnthropicServer;
let relay: TestRelay;
let clock: FakeClock;
let home: string;

function model(request: MessagesRequest): ScriptedReply {
  const result = lastToolResult(request);
  if (!result && toolNames(request).includes('AskUserQuestion')) return { text: 'Let me ask.', toolUse: { name: 'AskUserQuestion', input: { questions: [dbQuestion()] } } };
  return { text: `read: ${typeof result?.content === 'string' ? result.content : JSON.stringify(result?.content)}` };
}

beforeAll(async () => {
  fake = await startAnthropicServer({ model });
  home = mkdtempSync(join(tmpdir(), 'askrelay-route-claude-'));
  ({ relay, clock } = await startRelayWithClock(claudeRelayEnv(fake.url, home, '1h')));
  const routes = [{ name: 'db-default', match: { provider: 'claude', labels: { team: 'data' } }, to: ['everyone'], onExpiry: { answer: 'SQLite' } }];
  expect((await relay.api('/api/routes', { method: 'PUT', json: { routes } })).status).toBe(200);
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
  rmSync(home, { recursive: true, force: true });
});

it('at its deadline the route answers the card, and Claude reads an ordinary answer', async () => {
  const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt: 'Pick a database.', labels: { team: 'data' } } });
  expect(res.status).toBe(201);
  const session = (await res.json()) as Session;
  const card = await waitUntil(async () => (await relay.relay.list({ status: 'pending', sessionId: session.id }))[0], 'the card');
  expect(card).toMatchObject({ route: 'db-default', routedTo: ['everyone'], onExpiry: { answer: 'SQLite' } });

  clock.advance(3_600_000);
  const answered = await waitUntil(async () => {
    const now = (await (await relay.api(`/api/cards/${card.id}`)).json()) as Card;
    return now.status !== 'pending' && now;
  }, 'the default answer');
  expect(answered).toMatchObject({ status: 'answered', answer: { [card.questions[0].id]: { selected: ['SQLite'] } }, answeredBy: { kind: 'system', id: 'route:db-default', surface: 'route' } });

  const read = await waitUntil(() => fake.requests.map((r) => JSON.stringify(r.body)).find((b) => b.includes('tool_result')), 'the tool result sent to the model');
  const request = JSON.parse(read) as MessagesRequest;
  expect(lastToolResult(request)?.content).toBe(GOLDEN);
  await waitUntil(async () => (await relay.sessions.get(session.id)).status === 'idle', 'the session to finish its turn');

  const entries = await waitUntil(async () => {
    const all = ((await (await relay.api('/api/audit?limit=10000')).json()) as { entries: AuditEntry[] }).entries.filter((e) => e.cardId === card.id);
    return all.some((e) => e.event === 'card.answered') && all;
  }, 'the audit entry');
  expect(entries.find((e) => e.event === 'card.answered')).toMatchObject({ actor: { kind: 'system', id: 'route:db-default' }, detail: { default: true, route: 'db-default', reply: 'SQLite' } });
});
