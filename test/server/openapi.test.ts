import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// GET /api/openapi.json against the routes the relay really serves: a route the document
// leaves out fails here, and so does a documented route that does not exist. The document
// itself is checked with a maintained OpenAPI 3.1 validator.

let relay: TestRelay;
let doc: { openapi: string; paths: Record<string, Record<string, { security?: unknown[]; parameters?: { name: string; in: string }[] }>> };

beforeAll(async () => {
  relay = await startTestRelay();
  const res = await fetch(new URL('/api/openapi.json', relay.url)); // no token
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = (await res.json()) as typeof doc;
});
afterAll(() => relay?.stop());

/** "/api/cards/:id/wait" as OpenAPI writes it. */
const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

describe('the OpenAPI document', () => {
  it('describes exactly the /api routes the relay serves, method by method', () => {
    const served = new Set(relay.routes.filter((r) => r.path.startsWith('/api/')).map((r) => `${r.method.toLowerCase()} ${openApiPath(r.path)}`));
    const documented = new Set(Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`)));
    expect(served.size).toBeGreaterThan(20);
    expect([...served].filter((r) => !documented.has(r)), 'served but not documented').toEqual([]);
    expect([...documented].filter((r) => !served.has(r)), 'documented but not served').toEqual([]);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('says which routes take no token, and every path parameter', () => {
    const open = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).filter(([, op]) => op.security?.length === 0).map(([method]) => `${method} ${path}`));
    expect(open.sort()).toEqual(['get /api/health', 'get /api/openapi.json', 'post /api/login', 'post /api/logout']);
    for (const [path, ops] of Object.entries(doc.paths)) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map(([, name]) => name);
      for (const op of Object.values(ops)) expect(op.parameters?.filter((p) => p.in === 'path').map((p) => p.name)).toEqual(inPath);
    }
  });

  it('keeps the validating schemas: a card\'s answer body and the wait\'s timeout carry their limits', () => {
    const text = JSON.stringify(doc);
    const wait = doc.paths['/api/cards/{id}/wait'].get.parameters!.find((p) => p.name === 'timeout') as unknown as { schema: { maximum: number } };
    expect(wait.schema.maximum).toBe(3600);
    // The session start names the providers this relay runs, as its validation does.
    expect(text).toContain('"enum":["claude"');
  });

  it('is served the same to a second caller, and never needs the token', async () => {
    const again = await fetch(new URL('/api/openapi.json', relay.url), { headers: { authorization: 'Bearer wrong-token-0123456789abcdef' } });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(doc);
  });
});
