import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { sessionApi } from '../support/session-api.js';

// Every operation of GET /api/openapi.json sent to a running relay as the document shows it
// (its example body, query and headers; path ids are cards and a session made for it), and
// the response checked against the schema the document gives for its status. A field the
// relay answers with that the document does not describe fails here.

type Schema = Record<string, unknown>;
interface Operation {
  parameters?: { name: string; in: string; example?: unknown }[];
  requestBody?: { content: Record<string, { example?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

let fake: AnthropicServer;
let relay: TestRelay;
let doc: Doc;
const ajv = new Ajv2020({ strict: false, allErrors: true });

beforeAll(async () => {
  fake = await startAnthropicServer({ model: () => ({ text: 'Done.' }) });
  relay = await startTestRelay({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h' });
  doc = (await (await fetch(new URL('/api/openapi.json', relay.url))).json()) as Doc;
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
});

/** The documented schema of one response, its #/components refs resolved within the document. */
function validatorFor(schema: Schema) {
  return ajv.compile({ ...schema, components: doc.components });
}

/** Sessions last: stopping one is the last operation of the run. */
const ORDER = (key: string) => (key.startsWith('delete /api/sessions') ? 2 : key.startsWith('post /api/sessions/{id}/messages') ? 1 : 0);

describe('every documented example, sent to a relay', () => {
  it('answers each with a documented status and a body its documented schema accepts', async () => {
    const api = sessionApi(() => relay);
    const started = (await (await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt: 'Say done.' } })).json()) as { id: string };
    await api.done(started.id);
    const newCard = async () => ((await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ id: 'db', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] } })).json()) as { id: string }).id;

    const operations = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ key: `${method} ${path}`, path, method, op })))
      .sort((a, b) => ORDER(a.key) - ORDER(b.key));
    expect(operations.length).toBeGreaterThan(20);
    const checked: string[] = [];
    for (const { key, path, method, op } of operations) {
      // A card per operation on one: answering, replying and skipping each close theirs.
      const id = path.startsWith('/api/cards/{id}') ? await newCard() : started.id;
      // {name}: the person the POST /api/users example made (the document lists it first).
      const url = new URL(path.replace('{id}', id).replace('{name}', 'ada').replace('{link}', 'telegram:42'), relay.url);
      const headers: Record<string, string> = {};
      for (const p of op.parameters ?? []) {
        if (p.example === undefined) continue;
        if (p.in === 'query') url.searchParams.set(p.name, String(p.example));
        if (p.in === 'header') headers[p.name] = String(p.example);
      }
      let body = op.requestBody?.content['application/json']?.example;
      if (path === '/api/login') body = { token: relay.token }; // the document shows a placeholder
      // The page's own routes take only the relay's own origin, as the document says.
      if (path === '/api/login' || path === '/api/logout') headers.origin = new URL(relay.url).origin;
      if (method === 'get' && path === '/api/events') {
        const controller = new AbortController();
        const res = await relay.api(url.pathname, { signal: controller.signal });
        expect(res.status, key).toBe(200);
        expect(Object.keys(op.responses['200'].content ?? {})).toEqual([res.headers.get('content-type')!.split(';')[0]]);
        controller.abort();
        checked.push(key);
        continue;
      }
      const res = await relay.api(url.pathname + url.search, { method: method.toUpperCase(), headers, ...(body !== undefined ? { json: body } : {}) });
      const documented = op.responses[String(res.status)];
      const text = await res.text();
      expect(res.status < 300 && documented !== undefined, `${key}: HTTP ${res.status} ${text.slice(0, 300)}`).toBe(true);
      const schema = documented.content?.['application/json']?.schema;
      if (!schema) {
        expect(text, `${key}: a documented empty body`).toBe('');
      } else {
        const validate = validatorFor(schema);
        const ok = validate(JSON.parse(text));
        expect(ok, `${key}: ${ajv.errorsText(validate.errors)} in ${text.slice(0, 400)}`).toBe(true);
      }
      checked.push(key);
    }
    expect(checked.length).toBe(operations.length);
  });

  it('refuses what the schema refuses, with the documented error shape', async () => {
    const error = doc.components.schemas.Error;
    const validate = ajv.compile({ ...error, components: doc.components });
    const res = await relay.api('/api/cards', { method: 'POST', json: { questions: 'not a list' } });
    expect(res.status).toBe(400);
    expect(doc.paths['/api/cards'].post.responses['400']).toBeDefined();
    expect(validate(await res.json())).toBe(true);
  });
});
