import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cursorDialect } from '../../providers/cursor/index.js';
import { startAskMcpServer, type AskMcpServer } from '../../src/acp/ask-mcp-server.js';
import type { Card, CardDraft } from '../../src/cards/model.js';
import type { RunnerContext } from '../../src/sessions/runner.js';
import { cardOf } from '../support/card-fixture.js';

// The MCP server askrelay serves an ACP agent's session on loopback (src/acp/ask-mcp-server.ts):
// its refusals (no token, a wrong one, another path, a body over 1 MB, broken JSON), and that
// with its token a call of the ask tool opens the card and answers in the dialect's words.
// The real agents use it in gemini-acp.test.ts and codex-acp.test.ts.

let server: AskMcpServer;
const asked: CardDraft[] = [];

beforeAll(async () => {
  const ctx = {} as RunnerContext; // no relay tool: only the ask tool is served
  server = await startAskMcpServer(ctx, { dialect: cursorDialect, name: 'ask_human' }, async (draft) => {
    asked.push(draft);
    return { ...cardOf([{ id: 'q1', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }]), status: 'answered', answer: { q1: { selected: ['SQLite'] } } };
  });
});
afterAll(() => server?.close());

const rpc = (body: unknown, headers: Record<string, string> = {}, path = '/mcp') =>
  fetch(new URL(path, server.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${server.token}`, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const call = (name: string, args: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });

describe('the per-session ask MCP server', () => {
  it('listens on loopback only, with a token of its own', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(server.token).toMatch(/^[\w-]{32}$/);
  });

  it('refuses no token, a wrong one (non-ASCII ones too), another path, a body over 1 MB and broken JSON', async () => {
    expect((await rpc(call('ask_human', {}), { authorization: '' })).status).toBe(401);
    expect((await rpc(call('ask_human', {}), { authorization: 'Bearer wrong-token' })).status).toBe(401);
    // Non-ASCII (two UTF-8 bytes each): as long as the token in characters, in bytes, and neither.
    for (const bearer of ['é'.repeat(server.token.length), 'é'.repeat(server.token.length / 2), 'é'.repeat(3)]) {
      expect((await rpc(call('ask_human', {}), { authorization: `Bearer ${bearer}` })).status).toBe(401);
    }
    expect((await rpc(call('ask_human', {}), {}, '/other')).status).toBe(404);
    expect((await rpc(JSON.stringify({ pad: 'x'.repeat(1024 * 1024 + 1) }))).status).toBe(413);
    const broken = await rpc('{not json');
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: { code: number } }).error.code).toBe(-32700);
    expect(asked).toEqual([]);
  });

  it('an ask with bad arguments is a tool error the model can read; no card is opened', async () => {
    const res = await rpc(call('ask_human', { questions: [] }));
    const body = (await res.json()) as { result: { isError: boolean; content: { text: string }[] } };
    expect(body.result.isError).toBe(true);
    expect(body.result.content[0].text).toMatch(/questions/);
    expect(asked).toEqual([]);
  });

  it('an unknown tool is a tool error naming the tools there are', async () => {
    const body = (await (await rpc(call('delete_everything', {}))).json()) as { result: { isError: boolean; content: { text: string }[] } };
    expect(body.result).toEqual({ isError: true, content: [{ type: 'text', text: 'No tool "delete_everything" here; the tools are ask_human.' }] });
  });

  it('with its token, the ask tool opens a card and answers in the dialect\'s words', async () => {
    const body = (await (await rpc(call('ask_human', { questions: [{ question: 'Which database?', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }] }] }))).json()) as { result: { content: { text: string }[] } };
    expect(asked).toHaveLength(1);
    expect(asked[0].toolCallId).toMatch(/^mcp:[0-9a-f]{16}$/);
    expect(body.result.content[0].text).toBe('Which database? → SQLite');
  });
});
