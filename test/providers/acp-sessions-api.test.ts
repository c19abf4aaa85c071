import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { demoGeminiModel, demoResponsesModel } from '../fakes/acp-demo.js';
import { functionNames, startGeminiServer, type GeminiServer } from '../fakes/gemini-server.js';
import { startOpenAIServer, type OpenAIServer } from '../fakes/openai-server.js';
import { runCli } from '../support/cli.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { sessionApi } from '../support/session-api.js';

// Codex and Gemini CLI as a user drives them: a relay started as `askrelay serve` starts it,
// the sessions API and `askrelay session start --plan` start the sessions, the cards are
// answered through the API, and the relay tool reaches Gemini through askrelay's MCP server.

let openai: OpenAIServer;
let gemini: GeminiServer;
let relay: TestRelay;
let scratch: string;
const geminiRequests: Parameters<typeof demoGeminiModel>[0][] = [];

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'askrelay-acp-api-'));
  openai = await startOpenAIServer({ responses: demoResponsesModel });
  gemini = await startGeminiServer({
    model: (request, index, model) => {
      geminiRequests.push(request);
      return demoGeminiModel(request, index, model);
    },
  });
  relay = await startTestRelay({
    OPENAI_BASE_URL: openai.url,
    OPENAI_API_KEY: 'sk-test',
    GOOGLE_GEMINI_BASE_URL: gemini.url,
    GEMINI_API_KEY: 'AIza-test',
    ASKRELAY_WORKDIR: scratch,
    ASKRELAY_WAIT: '1h',
  });
});
afterAll(async () => {
  await relay?.stop();
  await Promise.all([openai?.close(), gemini?.close()]);
  rmSync(scratch, { recursive: true, force: true });
});

const api = sessionApi(() => relay, { waitMs: 45_000 });

async function answer(card: Card, label: string) {
  const res = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { [card.questions[0].id]: { selected: [label] } } } });
  expect(res.status).toBe(200);
}

describe('codex and gemini through the relay', { timeout: 90_000 }, () => {
  it('askrelay session start --provider codex --plan: Codex asks in Plan mode, the answer ends its turn', async () => {
    const run = await runCli(['session', 'start', '--provider', 'codex', '--plan', '--json', 'Help me pick a database.'], { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: relay.token }, scratch);
    expect(run.code, run.stderr).toBe(0);
    const started = JSON.parse(run.stdout) as Session;
    expect(started).toMatchObject({ provider: 'codex', engine: 'acp', model: 'gpt-5-codex', plan: true });
    const card = await api.pendingCard(started.id);
    expect(card).toMatchObject({ provider: 'codex', tool: 'request_user_input', questions: [{ id: 'db', text: 'Which database?' }] });
    await answer(card, 'SQLite');
    const done = await api.done(started.id);
    expect(done.transcript?.at(-1)?.text).toBe('Going with SQLite.');
  });

  it('POST /api/sessions {provider: "gemini"}: Gemini asks through ask_human and sees the relay tool beside it', async () => {
    const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'gemini', prompt: 'Help me pick a database.' } });
    expect(res.status).toBe(201);
    const started = (await res.json()) as Session;
    const card = await api.pendingCard(started.id);
    expect(card).toMatchObject({ provider: 'gemini', engine: 'acp', tool: 'ask_user' });
    expect(await api.status(started.id, 'waiting')).toBe('waiting');
    expect(functionNames(geminiRequests[0])).toEqual(expect.arrayContaining(['mcp_askrelay_ask_human', 'mcp_askrelay_list_questions', 'mcp_askrelay_answer_question']));
    await answer(card, 'PostgreSQL');
    const done = await api.done(started.id);
    expect(done.transcript?.at(-1)?.text).toBe('Going with PostgreSQL.');
  });

  it('plan is refused on another provider, with the reason', async () => {
    const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'gemini', plan: true, prompt: 'x' } });
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ error: { code: 'invalid_engine', message: 'gemini has no plan mode to start in; plan is for codex.' } });
  });
});
