import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { MCP_TOOLS, mcpClients } from '../support/mcp-tools.js';
import { waitUntil } from '../support/wait-until.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

// Every schema /mcp and /mcp/openclaw show tells the truth: the MCP Inspector's strict
// tools/list finds nothing to warn about, Ajv compiles each in strict mode, and what a schema
// accepts is what the relay takes (a client that validates before sending refuses nothing the
// relay would have taken, and sends nothing the relay refuses for its shape).

const INSPECTOR = createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector/clients/launcher/build/index.js');

let relay: TestRelay;
const clients = mcpClients('mcp-schemas');
beforeAll(async () => {
  relay = await startTestRelay();
});
afterAll(async () => {
  await clients.closeAll();
  await relay.stop();
});

interface InspectorRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `mcp-inspector --cli <url> --method tools/list --strict`, as an operator runs it. */
function inspectTools(url: string, headers: string[] = []): Promise<InspectorRun> {
  const args = [INSPECTOR, '--cli', url, '--transport', 'http', ...headers.flatMap((h) => ['--header', h]), '--method', 'tools/list', '--strict'];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { timeout: 60_000, env: { ...process.env, NO_COLOR: '1', HOME: process.env.HOME ?? '/tmp' } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A bare MCP server (the SDK's, stateless) offering one tool with the given input schema. */
async function serveOneTool(tool: { name: string; inputSchema: Record<string, unknown> }) {
  const http = createServer((req, res) => {
    const server = new Server({ name: 'schema-probe', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: [{ ...tool, inputSchema: { type: 'object' as const, ...tool.inputSchema } }] }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void server.close());
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () => new Promise((r) => http.close(r)),
  };
}

// The Inspector is a large program to start (seconds, more on a loaded machine).
describe('the MCP Inspector, strict', { timeout: 120_000 }, () => {
  it.each(['/mcp', '/mcp/openclaw'])('%s: tools/list passes with no finding', async (path) => {
    const run = await inspectTools(new URL(path, relay.url).href, [`Authorization: Bearer ${relay.token}`]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect((JSON.parse(run.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(MCP_TOOLS);
  });

  it('the same check reports a schema that allows anything (so a pass above means something)', async () => {
    const server = await serveOneTool({ name: 'loose', inputSchema: { properties: { data: {} } } });
    try {
      const run = await inspectTools(server.url);
      expect(run.stderr).toContain('Warning: tool "loose"');
      expect(run.stderr).toContain('inputSchema.properties.data');
    } finally {
      await server.close();
    }
  });
});

describe('Ajv, strict', () => {
  const ajv = new Ajv2020({ strict: true, strictTypes: true, strictRequired: true, allErrors: true });

  async function listed(path: string) {
    const { client } = await clients.connect(relay.url, relay.token, { path });
    return (await client.listTools()).tools;
  }

  it.each(['/mcp', '/mcp/openclaw'])('%s: every input and output schema compiles', async (path) => {
    for (const tool of await listed(path)) {
      expect(() => ajv.compile(tool.inputSchema), `${tool.name} inputSchema`).not.toThrow();
      const output = tool.outputSchema;
      if (output) expect(() => ajv.compile(output), `${tool.name} outputSchema`).not.toThrow();
    }
  });

  const DB = { id: 'db', header: 'Database', question: 'Which database?', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }] };
  const CASES: [string, string, unknown][] = [
    ['/mcp', 'options left out', { questions: [{ question: 'Any notes?' }] }],
    ['/mcp', 'options: []', { questions: [{ question: 'Any notes?', options: [] }] }],
    ['/mcp', 'one option', { questions: [{ question: 'Sure?', options: [{ label: 'Yes' }] }] }],
    ['/mcp', 'two options', { questions: [{ question: 'Sure?', options: [{ label: 'Yes' }, { label: 'No' }] }] }],
    ['/mcp', 'seven options', { questions: [{ question: 'Pick', options: 'abcdefg'.split('').map((label) => ({ label })) }] }],
    ['/mcp/openclaw', "OpenClaw's fixture", { questions: [DB] }],
    ['/mcp/openclaw', 'isSecret', { questions: [{ ...DB, isSecret: true }] }],
    ['/mcp/openclaw', 'no header', { questions: [{ ...DB, header: undefined }] }],
    ['/mcp/openclaw', 'an empty header', { questions: [{ ...DB, header: '' }] }],
    ['/mcp/openclaw', 'timeoutSeconds 1.5', { questions: [DB], timeoutSeconds: 1.5 }],
    ['/mcp/openclaw', 'timeoutSeconds 120', { questions: [DB], timeoutSeconds: 120 }],
    ['/mcp/openclaw', 'an option value', { questions: [{ ...DB, options: [{ label: 'PostgreSQL', value: 'pg' }, { label: 'SQLite' }] }] }],
    ['/mcp/openclaw', 'threadId', { questions: [DB], threadId: '1700000000.000200' }],
  ];

  it.each(CASES)('%s, %s: the schema accepts it exactly when the relay takes it', async (path, _name, args) => {
    const tool = (await listed(path)).find((t) => t.name === 'ask_user')!;
    const valid = ajv.validate(tool.inputSchema, JSON.parse(JSON.stringify(args)));
    const { client } = await clients.connect(relay.url, relay.token, { path });
    const before = (await relay.relay.list({ status: 'pending' })).map((c) => c.id);
    let ended = false;
    const call = client.callTool({ name: 'ask_user', arguments: args as Record<string, unknown> }).finally(() => (ended = true));
    // Taken: a card appears, and cancelling it ends the call (as no_answer, not an error).
    // Refused: the call ends with no card. Either way nothing is left polling afterwards.
    const card = await waitUntil(async () => ended || (await relay.relay.list({ status: 'pending' })).find((c) => !before.includes(c.id)), 'a card, or the refusal');
    if (card !== true) await relay.relay.cancel(card.id);
    const outcome = { refused: (await call).isError === true };
    expect(!outcome.refused).toBe(valid);
  });
});
