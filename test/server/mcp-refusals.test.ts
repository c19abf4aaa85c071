import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// What the MCP route refuses before any session is opened: a body past its 1 MB limit
// (413) and a body that is not JSON (the JSON-RPC parse error, -32700).

let relay: TestRelay;
beforeAll(async () => {
  relay = await startTestRelay();
});
afterAll(async () => relay?.stop());

function post(body: string): Promise<Response> {
  return fetch(new URL('/mcp', relay.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${relay.token}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body,
  });
}

describe('the MCP route refuses', () => {
  it('a body over 1 MB: 413, a JSON-RPC error, no session opened', async () => {
    const res = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(1024 * 1024) } }));
    expect(res.status).toBe(413);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const body = await res.json();
    expect(body).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
  });

  it('a body that is not JSON: 400 with the parse error -32700', async () => {
    const res = await post('{"jsonrpc": "2.0", "id": 1,');
    expect(res.status).toBe(400);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: the body is not valid JSON.' } });
  });
});
