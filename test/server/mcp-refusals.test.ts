import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mcpClients, startEchoRelay } from '../support/mcp-tools.js';
import type { TestRelay } from '../support/running-relay.js';

// What the MCP route refuses: a body past its 1 MB limit (413) and a body that is not JSON
// (the JSON-RPC parse error, -32700), both before any session is opened; and a session id
// that another caller opened (404, -32001), which never reaches that caller's session.

let echo: Awaited<ReturnType<typeof startEchoRelay>>;
let relay: TestRelay;
const clients = mcpClients('mcp-refusals-test');
beforeAll(async () => {
  echo = await startEchoRelay();
  relay = echo.relay;
});
afterEach(() => clients.closeAll());
afterAll(() => echo?.stop());

function post(body: string, token = relay.token, sessionId?: string): Promise<Response> {
  return fetch(new URL('/mcp', relay.url), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      ...(sessionId ? { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' } : {}),
    },
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

describe("another caller's Mcp-Session-Id", () => {
  const agentToken = () => echo.agentToken();

  /** The real MCP client, connected (initialized) with `token`; its session id is the one to steal. */
  async function connect(token: string) {
    const { client, transport } = await clients.connect(relay.url, token);
    return { client, sessionId: transport.sessionId! };
  }

  const NOT_FOUND = { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found (the relay may have restarted); start a new session.' } };
  const askUser = JSON.stringify({
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'ask_user', arguments: { questions: [{ question: 'Stolen session?', options: [{ label: 'Yes' }, { label: 'No' }] }] } },
  });

  it.each([
    ['the operator', 'an agent'],
    ['an agent', 'the operator'],
    ['an agent', 'another agent'],
  ])("opened by %s, used by %s: 404 with -32001 for every method, and the owner's session carries on untouched", async (owner, intruder) => {
    const ownerToken = owner === 'the operator' ? relay.token : await agentToken();
    const intruderToken = intruder === 'the operator' ? relay.token : await agentToken();
    const { client, sessionId } = await connect(ownerToken);
    const pendingBefore = (await relay.relay.list({ status: 'pending' })).length;

    const list = await post(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/list' }), intruderToken, sessionId);
    expect(list.status).toBe(404);
    expect(await list.json()).toEqual(NOT_FOUND);

    // A tool call through the stolen id asks nothing.
    const call = await post(askUser, intruderToken, sessionId);
    expect(call.status).toBe(404);
    expect(await call.json()).toEqual(NOT_FOUND);

    // Neither its stream nor its end are the intruder's to take.
    const headers = { authorization: `Bearer ${intruderToken}`, accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' };
    const stream = await fetch(new URL('/mcp', relay.url), { headers });
    expect(stream.status).toBe(404);
    expect(await stream.json()).toEqual(NOT_FOUND);
    const end = await fetch(new URL('/mcp', relay.url), { method: 'DELETE', headers });
    expect(end.status).toBe(404);
    expect(await end.json()).toEqual(NOT_FOUND);

    // The owner's session is still open and answers on the same id.
    const tools = await client.listTools();
    expect(tools.tools[0].name).toBe('ask_user');
    const again = await post(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/list' }), ownerToken, sessionId);
    expect(again.status).toBe(200);
    expect((await relay.relay.list({ status: 'pending' })).length).toBe(pendingBefore);
  });
});
