import { request } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { VENDOR, webFiles } from '../../src/server/web-page.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// Every response says: do not sniff my type, send no Referer from me, never frame me; and
// the page's own policy forbids framing too (an answer button clicked through a frame).

let relay: TestRelay;
beforeAll(async () => {
  relay = await startTestRelay();
});
afterAll(() => relay.stop());

function expectHardened(res: Response, what: string) {
  expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(res.headers.get('referrer-policy'), what).toBe('no-referrer');
  expect(res.headers.get('x-frame-options'), what).toBe('DENY');
}

it('on JSON, errors, 404s and the MCP endpoint', async () => {
  const card = (await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Hi?' }] } })).json()) as Card;
  const sample: [string, Response][] = [
    ['health', await fetch(new URL('/api/health', relay.url))],
    ['a 401', await fetch(new URL('/api/cards', relay.url))],
    ['an unknown API route', await relay.api('/api/nothing')],
    ['an unknown page', await fetch(new URL('/nothing', relay.url))],
    ['a card', await relay.api(`/api/cards/${card.id}`)],
    ['a 415', await relay.api('/api/cards', { method: 'POST', body: '{}', headers: { 'content-type': 'text/plain' } })],
    ['a long poll ending in 204', await relay.api(`/api/cards/${card.id}/wait?timeout=0`)],
    [
      'MCP',
      await relay.api('/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
      }),
    ],
    ['a chat webhook', await fetch(new URL('/channels/slack/events', relay.url), { method: 'POST', body: '{}' })],
  ];
  for (const [what, res] of sample) {
    expectHardened(res, what);
    await res.body?.cancel();
  }
});

it('on the page, its files and its service worker, with frame-ancestors in the page\'s policy', async () => {
  const paths = [...Object.keys(webFiles()), ...Object.keys(VENDOR)];
  // The page's modules are served, each as JavaScript (a module script refuses any other type),
  // and so are the libraries it imports (markdown-it).
  expect(paths).toEqual(expect.arrayContaining(['/', '/app.js', '/dom.js', '/card-draft.js', '/style.css', '/sw.js', '/vendor/markdown-it.js']));
  for (const path of paths) {
    const res = await fetch(new URL(path, relay.url));
    expect(res.status).toBe(200);
    const type = path === '/' ? 'text/html' : path.endsWith('.css') ? 'text/css' : 'text/javascript';
    expect(res.headers.get('content-type'), path).toBe(`${type}; charset=utf-8`);
    expect(res.headers.get('cache-control'), path).toBe('no-cache');
    expectHardened(res, path);
    expect(res.headers.get('content-security-policy'), path).toMatch(/frame-ancestors 'none'/);
    // Exactly once each, not repeated by the route and the middleware.
    expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
    await res.body?.cancel();
  }
  expect((await fetch(new URL('/sw.js', relay.url))).headers.get('service-worker-allowed')).toBe('/');
  // The library is the one self-contained module (no imports of its own), without its source-map comment.
  const library = await (await fetch(new URL('/vendor/markdown-it.js', relay.url))).text();
  expect(library).toMatch(/^\/\*! markdown-it \d+\.\d+\.\d+/);
  expect(library).toMatch(/export \{ \w+ as default \};\s*$/);
  expect(library).not.toMatch(/^import /m);
  expect(library).not.toContain('sourceMappingURL');
});

it('serves only the page\'s own files: unknown names and climbs out of the folder are 404', async () => {
  // Raw paths, as a client that does not normalise them would send them.
  for (const path of ['/nothing.js', '/index.html', '/%2e%2e/web-page.ts', '/..%2fweb-page.ts', '/web/app.js', '/app.js/../../package.json', '/%2e%2e%2f%2e%2e%2fpackage.json']) {
    const res = await rawGet(path);
    expect(res.status, path).toBe(404);
    expect(res.body, path).not.toMatch(/import|webPage|"name"/);
  }
});

/** A GET with the path sent exactly as given (fetch would resolve the dots first). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  const url = new URL(relay.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

it('on the event stream, which the route writes to Node itself', async () => {
  const controller = new AbortController();
  const res = await relay.api('/api/events', { signal: controller.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
  expectHardened(res, 'SSE');
  controller.abort();
});
