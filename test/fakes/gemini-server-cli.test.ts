// The real Gemini CLI (@google/gemini-cli 0.61.0) against the fake Gemini API, offline: once
// non-interactive (`gemini -p`), then as an ACP agent (`gemini --acp`) driven by
// @agentclientprotocol/sdk 2.4.0's client.
//
// What Gemini CLI 0.61 does (measured here, 2026-12-02), for whoever builds the gemini provider:
// - Launch: GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT (no /v1beta; plain http is fine),
//   GEMINI_API_KEY, GEMINI_MODEL, a private HOME, GEMINI_CLI_NO_RELAUNCH=true (no second node
//   process). $HOME/.gemini/settings.json with privacy.usageStatisticsEnabled=false (else it
//   writes an installation_id and its usage logger would phone home), telemetry off, auto
//   update off, security.auth.selectedType "gemini-api-key", security.folderTrust.enabled=false
//   (else "untrusted folder": project hooks and agents are skipped). With that, strace saw one
//   connect(): to the fake. ACP needs no `authenticate`: the key in the environment is enough.
// - Requests: only POST /v1beta/models/<GEMINI_MODEL>:streamGenerateContent?alt=sse, one per
//   model turn: no countTokens, no GET /models, no side requests (next-speaker, routing, titles)
//   with a fixed GEMINI_MODEL. Headers: `x-goog-api-key: <key>`, `x-goog-api-client:
//   google-genai-sdk/1.30.0 gl-node/v20…`, `user-agent: GeminiCLI-tui/0.61.0/<model> (linux;
//   x64; terminal)`, content-type application/json, no content-encoding.
// - Body: contents, systemInstruction ({parts:[{text}]}, the long agent prompt), tools (ONE tool
//   with every functionDeclaration, each {name, description, parametersJsonSchema}),
//   generationConfig {temperature:1, topP:0.95, topK:64, thinkingConfig:{includeThoughts:true,
//   thinkingBudget:8192}}. The first user content has two text parts: a
//   `<session_context>…</session_context>` block (date, OS, workspace listing), then the prompt.
// - Functions offered: `-p` gets read-only ones (update_topic, list_directory, read_file,
//   grep_search, glob, google_web_search, enter_plan_mode, invoke_agent); ACP adds replace,
//   write_file, web_fetch, run_shell_command {command (required), description, dir_path,
//   is_background, delay_ms}, list_background_processes, read_background_output, write_todos,
//   activate_skill. Never ask_user: the CLI excludes it in -p and ACP modes.
// - A function call's round trip: the next request replays the model's content with our call
//   plus an `id` the CLI made up (`<name>_<epoch ms>_<n>`) and `thoughtSignature:
//   "skip_thought_signature_validator"`, then a user content {functionResponse: {name, response:
//   {output: "<untrusted_context>\nOutput: hi\nProcess Group PGID: N\n</untrusted_context>"}, id}}.
//   A rejected call comes back as response {error: 'Tool "run_shell_command" was canceled by the
//   user.'} and the turn goes on (one more model request), also for outcome "cancelled".
// - Errors: a 400 (API_KEY_INVALID) is not retried: `-p` exits 1, the API's body on stderr, and
//   a report lands in $TMPDIR/gemini-client-error-*.json. A 429 with RetryInfo "1s" and a 500
//   are retried once after ~6 s (backoff), so scripted errors make slow CLI tests.
// - ACP: initialize → agentCapabilities {loadSession, promptCapabilities {image, audio,
//   embeddedContext}, mcpCapabilities {http, sse}}, authMethods oauth-personal, gemini-api-key,
//   vertex-ai, gateway. session/new → modes default|autoEdit|yolo|plan (current "default") and
//   `models` (currentModelId = GEMINI_MODEL). Text streams as agent_message_chunk, one per SSE
//   chunk; session/prompt ends {stopReason:"end_turn", _meta:{quota:{token_count, model_usage}}}.
// - Permissions: read-only shell commands (`echo hi`) run unasked (tool_call in_progress, then
//   tool_call_update completed). Others (`echo hi | tee f`) send session/request_permission
//   {toolCall:{toolCallId "<name>__<call id>", kind "execute", status "pending", title = the
//   command, content [text "[current working directory …] (<description>)"]}, options
//   [proceed_always "Allow for this session" allow_always, proceed_once "Allow" allow_once,
//   cancel "Reject" reject_once]} and no tool_call update before it; MCP tools offer
//   proceed_always_server "Allow all server tools for this session", proceed_always_tool,
//   proceed_once, cancel.
// - MCP: session/new accepts mcpServers [{type:"http", name, url, headers:[{name, value}]}] and
//   offers the server's tools as `mcp_<server>_<tool>`. askrelay's /mcp ask_user is NOT offered:
//   the ACP-mode exclusion of "ask_user" also matches an MCP tool's unqualified name
//   (list_questions, answer_question, start_session, watch_session are offered). A relay tool
//   for Gemini must be called something else.
import * as acp from '@agentclientprotocol/sdk';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { diesWithTest } from '../support/child-guard.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { functionDeclaration, functionNames, lastFunctionResponse, lastUserText, scriptedGemini, startGeminiServer, type GeminiServer, type GenerateContentRequest, type ScriptedGeminiModel } from './gemini-server.js';

const GEMINI = fileURLToPath(new URL('../../node_modules/@google/gemini-cli/bundle/gemini.js', import.meta.url));
const MODEL = 'gemini-2.5-flash';
const KEY = 'AIza-fake-gemini';
const SETTINGS = {
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
  ide: { enabled: false },
};

let server: GeminiServer | undefined;
let relay: TestRelay | undefined;
const scratch: string[] = [];
afterEach(async () => {
  await server?.close();
  await relay?.stop();
  server = relay = undefined;
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A fake server playing `model`, and the CLI's environment: a private HOME with its settings, a workspace. */
async function setUp(model: ScriptedGeminiModel, apiKey = KEY): Promise<{ env: NodeJS.ProcessEnv; work: string }> {
  server = await startGeminiServer({ model, apiKey: KEY });
  const root = mkdtempSync(join(tmpdir(), 'askrelay-gemini-'));
  scratch.push(root);
  const [home, work, tmp] = ['home', 'work', 'tmp'].map((name) => join(root, name)) as [string, string, string];
  mkdirSync(join(home, '.gemini'), { recursive: true });
  mkdirSync(work);
  mkdirSync(tmp);
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(SETTINGS));
  // A minimal environment: nothing of the developer's Gemini login, settings or keys leaks in.
  // TMPDIR: the CLI writes an error report (gemini-client-error-*.json) there on each API error.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: tmp, GOOGLE_GEMINI_BASE_URL: server.url, GEMINI_API_KEY: apiKey, GEMINI_MODEL: MODEL, GEMINI_CLI_NO_RELAUNCH: 'true' };
  return { env, work };
}

const bodies = () => server!.requests.map((r) => r.body as GenerateContentRequest);

/** `gemini -p <prompt>` against a fresh fake playing `model`. */
async function runPrint(model: ScriptedGeminiModel, prompt: string, apiKey = KEY): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { env, work } = await setUp(model, apiKey);
  const [command, args] = diesWithTest(process.execPath, [GEMINI, '-p', prompt]);
  const child = spawn(command, args, { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString('utf8')));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('error', reject);
    child.once('close', (exit) => {
      clearTimeout(timer);
      resolve(exit);
    });
  });
  return { code, stdout, stderr };
}

interface AcpRun {
  work: string;
  init: acp.InitializeResponse;
  session: acp.NewSessionResponse;
  updates: acp.SessionUpdate[];
  permissions: acp.RequestPermissionRequest[];
}

/**
 * `gemini --acp` against a fresh fake playing `model`: initialize, session/new, then `drive`
 * (which sends the prompts). Permission requests are answered by `decide` (default: the
 * allow_once option); any other request from the agent fails the test.
 */
async function runAcp(
  model: ScriptedGeminiModel,
  drive: (agent: acp.ClientContext, sessionId: string) => Promise<void>,
  { mcpServers = [], decide }: { mcpServers?: acp.McpServer[]; decide?: (request: acp.RequestPermissionRequest) => acp.RequestPermissionResponse } = {},
): Promise<AcpRun> {
  const { env, work } = await setUp(model);
  const [command, args] = diesWithTest(process.execPath, [GEMINI, '--acp']);
  const child = spawn(command, args, { cwd: work, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (data: Buffer) => (stderr += data.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const updates: acp.SessionUpdate[] = [];
  const permissions: acp.RequestPermissionRequest[] = [];
  const unexpected: string[] = [];
  const allowOnce = (request: acp.RequestPermissionRequest): acp.RequestPermissionResponse => ({
    outcome: { outcome: 'selected', optionId: request.options.find((o) => o.kind === 'allow_once')!.optionId },
  });
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>);
  try {
    return await acp
      .client()
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
        permissions.push(params);
        return (decide ?? allowOnce)(params);
      })
      .onNotification(acp.methods.client.session.update, ({ params }) => void updates.push(params.update))
      .onRequest('*', ({ method }) => {
        unexpected.push(method);
        throw acp.RequestError.methodNotFound(method);
      })
      .connectWith(stream, async (agent) => {
        const init = await agent.request(acp.methods.agent.initialize, {
          protocolVersion: acp.PROTOCOL_VERSION,
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
          clientInfo: { name: 'askrelay-test', version: '0.0.0' },
        });
        const session = await agent.request(acp.methods.agent.session.new, { cwd: work, mcpServers });
        await drive(agent, session.sessionId);
        expect(unexpected, stderr).toEqual([]);
        return { work, init, session, updates, permissions };
      });
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
}

const prompt = (agent: acp.ClientContext, sessionId: string, text: string) => agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] });
const messageText = (updates: acp.SessionUpdate[]) =>
  updates.flatMap((u) => (u.sessionUpdate === 'agent_message_chunk' && u.content.type === 'text' ? [u.content.text] : [])).join('');

describe('the real Gemini CLI against the fake Gemini API', () => {
  it('gemini -p prints the scripted reply; its one request is a streamGenerateContent over SSE with the key, the prompt and its tools', async () => {
    const run = await runPrint(scriptedGemini(['Hello from the fake Gemini.']), 'Say hello.');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('Hello from the fake Gemini.');

    expect(server!.requests.map((r) => `${r.method} ${r.path}${r.query}`)).toEqual([`POST /v1beta/models/${MODEL}:streamGenerateContent?alt=sse`]);
    const { headers } = server!.requests[0]!;
    expect(headers['x-goog-api-key']).toBe(KEY);
    expect(headers['x-goog-api-client']).toMatch(/^google-genai-sdk\/1\.30\.0 gl-node\/v/);
    expect(headers['user-agent']).toMatch(new RegExp(`^GeminiCLI-tui/0\\.61\\.0/${MODEL} \\(`));

    const [body] = bodies() as [GenerateContentRequest];
    expect(Object.keys(body).sort()).toEqual(['contents', 'generationConfig', 'systemInstruction', 'tools']);
    expect(body.generationConfig).toMatchObject({ thinkingConfig: { includeThoughts: true } });
    expect(body.contents).toHaveLength(1);
    expect(body.contents[0]!.parts.map((p) => p.text?.split('\n')[0])).toEqual(['<session_context>', 'Say hello.']);
    expect(lastUserText(body)).toBe('Say hello.');
    expect(body.tools).toHaveLength(1);
    expect(functionNames(body)).toEqual(expect.arrayContaining(['read_file', 'list_directory', 'glob', 'grep_search']));
    expect(functionNames(body)).not.toContain('run_shell_command');
    expect(functionNames(body)).not.toContain('ask_user');
    for (const declaration of body.tools![0]!.functionDeclarations!) expect(Object.keys(declaration).sort()).toEqual(['description', 'name', 'parametersJsonSchema']);
  }, 30_000);

  it('gemini -p stops at once on the API key error (no retry) and prints what the API said', async () => {
    const run = await runPrint(scriptedGemini(['never']), 'hi', 'AIza-a-wrong-key');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('"reason":"API_KEY_INVALID"');
    expect(run.stderr).toContain('API key not valid. Please pass a valid API key.');
    expect(server!.requests).toHaveLength(1);
    expect(server!.requests[0]!.headers['x-goog-api-key']).toBe('AIza-a-wrong-key');
  }, 30_000);

  it('gemini --acp streams a text reply to the ACP client as agent_message_chunk updates', async () => {
    const text = 'Hello over ACP, in several streamed pieces.';
    const run = await runAcp(scriptedGemini([text]), async (agent, sessionId) => {
      expect(await prompt(agent, sessionId, 'Say hello.')).toMatchObject({ stopReason: 'end_turn' });
    });
    expect(messageText(run.updates)).toBe(text);
    expect(run.init.agentCapabilities).toMatchObject({ loadSession: true, mcpCapabilities: { http: true } });
    expect(run.init.authMethods?.map((m) => m.id)).toContain('gemini-api-key');
    expect(run.session.modes?.currentModeId).toBe('default');

    const [body] = bodies() as [GenerateContentRequest];
    expect(lastUserText(body)).toBe('Say hello.');
    expect(functionNames(body)).toEqual(expect.arrayContaining(['run_shell_command', 'write_file', 'replace', 'read_file']));
    expect(functionNames(body)).not.toContain('ask_user');
    expect(functionDeclaration(body, 'run_shell_command')).toMatchObject({ parametersJsonSchema: { type: 'object', required: ['command'], properties: { command: { type: 'string' } } } });
  }, 30_000);

  it('asks session/request_permission for a shell command that writes, runs it once allowed, and sends its functionResponse back', async () => {
    const shell = (command: string) => ({ functionCalls: [{ name: 'run_shell_command', args: { command, description: 'Write hi' } }] });
    const run = await runAcp(
      scriptedGemini([
        shell('echo hi'),
        (request) => `Read-only: ${JSON.stringify(lastFunctionResponse(request))}`,
        { text: 'Writing it.', ...shell('echo hi | tee hi.txt') },
        (request) => `Done: ${String(lastFunctionResponse(request)?.response.output)}`,
      ]),
      async (agent, sessionId) => {
        expect(await prompt(agent, sessionId, 'Say hi.')).toMatchObject({ stopReason: 'end_turn' });
        expect(await prompt(agent, sessionId, 'Write hi to hi.txt.')).toMatchObject({ stopReason: 'end_turn' });
      },
    );
    // `echo hi` is read-only: it ran without asking; the write asked once
    expect(run.permissions).toHaveLength(1);
    const [permission] = run.permissions as [acp.RequestPermissionRequest];
    expect(permission.toolCall).toMatchObject({ kind: 'execute', status: 'pending', title: 'echo hi | tee hi.txt', toolCallId: expect.stringMatching(/^run_shell_command__run_shell_command_\d+_\d+$/) });
    expect(permission.options).toEqual([
      { optionId: 'proceed_always', name: 'Allow for this session', kind: 'allow_always' },
      { optionId: 'proceed_once', name: 'Allow', kind: 'allow_once' },
      { optionId: 'cancel', name: 'Reject', kind: 'reject_once' },
    ]);
    expect(readFileSync(join(run.work, 'hi.txt'), 'utf8')).toBe('hi\n');
    expect(run.updates).toContainEqual(expect.objectContaining({ sessionUpdate: 'tool_call_update', toolCallId: permission.toolCall.toolCallId, status: 'completed' }));

    const requests = bodies();
    expect(requests).toHaveLength(4);
    const last = requests[3]!;
    const [call, result] = last.contents.slice(-2);
    expect(call).toEqual({
      role: 'model',
      parts: [{ text: 'Writing it.' }, { functionCall: { id: expect.stringMatching(/^run_shell_command_\d+_\d+$/), name: 'run_shell_command', args: { command: 'echo hi | tee hi.txt', description: 'Write hi' } }, thoughtSignature: 'skip_thought_signature_validator' }],
    });
    const id = call!.parts[1]!.functionCall!.id;
    expect(result).toEqual({
      role: 'user',
      parts: [{ functionResponse: { id, name: 'run_shell_command', response: { output: expect.stringMatching(/^<untrusted_context>\nOutput: hi\nProcess Group PGID: \d+\n<\/untrusted_context>$/) } } }],
    });
    expect(lastFunctionResponse(requests[1]!)).toMatchObject({ name: 'run_shell_command', response: { output: expect.stringContaining('Output: hi') } });
    expect(messageText(run.updates)).toContain('Done: <untrusted_context>\nOutput: hi\n');
  }, 30_000);

  it("accepts an HTTP MCP server in session/new and offers its tools as mcp_<server>_<tool>, but never askrelay's ask_user", async () => {
    relay = await startTestRelay();
    const mcpServers: acp.McpServer[] = [{ type: 'http', name: 'askrelay', url: `${relay.url}mcp`, headers: [{ name: 'Authorization', value: `Bearer ${relay.token}` }] }];
    await runAcp(scriptedGemini(['Seen your tools.']), async (agent, sessionId) => {
      expect(await prompt(agent, sessionId, 'Which tools?')).toMatchObject({ stopReason: 'end_turn' });
    }, { mcpServers });
    const names = functionNames(bodies()[0]!);
    expect(names).toEqual(expect.arrayContaining(['mcp_askrelay_list_questions', 'mcp_askrelay_answer_question', 'mcp_askrelay_start_session', 'mcp_askrelay_watch_session']));
    expect(names.filter((name) => name.includes('ask_user'))).toEqual([]);
  }, 30_000);
});
