// The real Codex CLI (@openai/codex 0.166, the version @agentclientprotocol/codex-acp 2.6.0
// pins) run with `codex exec --json` against the fake's Responses API, offline.
//
// What Codex 0.166 sends (measured here, 2026-12-02), for whoever builds the Codex provider:
// - Config: a private CODEX_HOME/config.toml with `model_provider = "fake"` and
//   `[model_providers.fake] base_url = "http://127.0.0.1:PORT/v1", wire_api = "responses",
//   env_key = "FAKE_API_KEY"`. `--strict-config` accepts the other keys used below
//   (check_for_update_on_startup, [analytics] enabled, [feedback] enabled, [otel] exporter,
//   request_max_retries, stream_max_retries, supports_websockets). With retries at 0 each
//   failure is one request. No other request reaches the server: no GET /models, no
//   websocket, no /responses/compact (a short session never compacts).
// - Request: POST {base_url}/responses, no content-encoding. Headers: `authorization: Bearer
//   $FAKE_API_KEY`, `accept: text/event-stream`, `originator: codex_exec`, `user-agent:
//   codex_exec/0.166.0 (…)`, `session-id` = `thread-id` = `x-client-request-id` (the thread
//   id), `x-codex-window-id` (`<thread>:0`), `x-codex-beta-features: remote_compaction_v2`,
//   `x-codex-turn-metadata` (JSON: session/thread/turn ids, sandbox, model,
//   analytics_enabled, turn_trigger "exec").
// - Body: model, stream true, store false, tool_choice "auto", parallel_tool_calls true,
//   reasoning {summary:"auto"}, include ["reasoning.encrypted_content"], prompt_cache_key
//   (the thread id), client_metadata (the same ids); NO `instructions`: the base prompt
//   (~17 kB) is the first `developer` message of `input`, then a developer message with the
//   skills list, a user message with <environment_context> (cwd, shell, date, timezone…),
//   then the prompt as its own user message (`input_text`). Every input item has an id.
// - Tools (~17 kB of the ~39 kB body): function exec_command {cmd (required), workdir,
//   yield_time_ms, tty, login, shell, max_output_tokens, sandbox_permissions, justification,
//   prefix_rule},
//   write_stdin {session_id, chars, …}, request_user_input {questions[{id, header,
//   question, options[{label, description}]}]} ("only available in Plan mode", offered even
//   in exec), view_image, a `namespace` tool multi_agent_v1 (spawn_agent, send_input,
//   wait_agent, close_agent, resume_agent), get_goal/create_goal/update_goal, and
//   {type:"web_search", external_web_access:true}. All function tools are `strict: false`.
//   No apply_patch: with an unknown model ("Model metadata for `gpt-5-codex` not found",
//   reported as an `error` item, not fatal) Codex falls back to default metadata.
// - A function call's round trip: the next request's input replays our output items
//   verbatim (the assistant `message` and the `function_call` with our msg_/fc_ ids and
//   call_id), then `{type:"function_call_output", id:"fco_<uuid>", call_id, output}` where
//   output is a string: "Chunk ID: …\nWall time: … seconds\nProcess exited with code 0\n
//   Original token count: 1\nOutput:\nhi\n". exec_command runs `/bin/bash -lc '<cmd>'`.
// - It parses only what it needs: a stream with no output_item.added/deltas is accepted too.
//   Errors end the turn (`turn.failed`, exit code 1): 401 → "unexpected status 401
//   Unauthorized: <message>, url: …, request id: <x-request-id>"; response.failed →
//   "stream disconnected before completion: <message>"; 429 → "exceeded retry limit, last
//   status: 429 Too Many Requests…"; 500 → a generic "high demand" message.
// - Side notes: CODEX_HOME under /tmp gives a harmless stderr WARNING (no PATH helper
//   aliases); `exec` prints "Reading additional input from stdin..." unless stdin is closed.
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { functionCallOutputs, lastFunctionCallOutput, lastUserText, scriptedResponses, toolNames, toolSchema, type ResponsesRequest, type ScriptedResponsesModel } from './openai-responses.js';
import { startOpenAIServer, type OpenAIServer } from './openai-server.js';

const CODEX = fileURLToPath(new URL('../../node_modules/@openai/codex/bin/codex.js', import.meta.url));
const KEY = 'sk-fake-codex';

let server: OpenAIServer | undefined;
const scratch: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface CodexRun {
  code: number | null;
  /** `codex exec --json` events, one per stdout line. */
  events: Array<{ type: string; item?: { type: string; text?: string; [key: string]: unknown }; error?: { message: string }; [key: string]: unknown }>;
  stderr: string;
  requests: ResponsesRequest[];
}

/** Runs `codex exec --json <prompt>` against a fresh fake server playing `model`. */
async function runCodex(model: ScriptedResponsesModel, prompt: string, apiKey = KEY): Promise<CodexRun> {
  server = await startOpenAIServer({ responses: model, apiKey });
  const root = mkdtempSync(join(tmpdir(), 'askrelay-codex-'));
  scratch.push(root);
  const [home, codexHome, work] = ['home', 'codex-home', 'work'].map((name) => join(root, name));
  for (const dir of [home!, codexHome!, work!]) mkdirSync(dir);
  writeFileSync(
    join(codexHome!, 'config.toml'),
    [
      'model = "gpt-5-codex"',
      'model_provider = "fake"',
      'check_for_update_on_startup = false',
      '[analytics]\nenabled = false',
      '[feedback]\nenabled = false',
      '[otel]\nexporter = "none"',
      '[model_providers.fake]',
      'name = "fake"',
      `base_url = "${server.url}"`,
      'wire_api = "responses"',
      'env_key = "FAKE_API_KEY"',
      // One request per failure, so a scripted error is seen at once (Codex retries by default).
      'request_max_retries = 0',
      'stream_max_retries = 0',
      'supports_websockets = false',
    ].join('\n'),
  );
  const args = ['exec', '--json', '--strict-config', '--skip-git-repo-check', '--ephemeral', '--dangerously-bypass-approvals-and-sandbox', '-C', work!, prompt];
  // A minimal environment: nothing of the developer's Codex login, config or keys leaks in.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home!, CODEX_HOME: codexHome!, FAKE_API_KEY: KEY };
  const child = spawn(process.execPath, [CODEX, ...args], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString('utf8')));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString('utf8')));
  const code = await new Promise<number | null>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('error', reject);
    child.once('close', (exit) => {
      clearTimeout(timer);
      resolve(exit);
    });
  });
  const events = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as CodexRun['events'][number]);
  return { code, events, stderr, requests: server.requests.map((r) => r.body as ResponsesRequest) };
}

const messages = (run: CodexRun) => run.events.filter((e) => e.type === 'item.completed' && e.item?.type === 'agent_message').map((e) => e.item!.text);

describe('the real Codex (codex exec) against the fake Responses API', () => {
  it('prints a scripted text reply; its request carries the prompt, the key and its tools', async () => {
    const run = await runCodex(scriptedResponses(['Hello from the fake model.']), 'Say hello.');
    expect(run.code, run.stderr).toBe(0);
    expect(messages(run)).toEqual(['Hello from the fake model.']);
    expect(run.events.at(-1)).toMatchObject({ type: 'turn.completed', usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) } });

    expect(server!.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/responses']);
    const { headers } = server!.requests[0]!;
    expect(headers).toMatchObject({ authorization: `Bearer ${KEY}`, accept: 'text/event-stream', 'content-type': 'application/json', originator: 'codex_exec' });
    expect(headers['user-agent']).toMatch(/^codex_exec\/0\.166\.0 /);
    expect(headers['session-id']).toBe(headers['thread-id']);
    expect(JSON.parse(String(headers['x-codex-turn-metadata']))).toMatchObject({ thread_id: headers['thread-id'], model: 'gpt-5-codex', analytics_enabled: false });

    const request = run.requests[0]!;
    expect(request).toMatchObject({
      model: 'gpt-5-codex',
      stream: true,
      store: false,
      tool_choice: 'auto',
      parallel_tool_calls: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: headers['thread-id'],
    });
    expect(request.instructions).toBeUndefined();
    const input = request.input as Array<{ type?: string; role?: string }>;
    expect(input.map((item) => `${item.type}:${item.role}`)).toEqual(['message:developer', 'message:developer', 'message:user', 'message:user']);
    expect(lastUserText(request)).toBe('Say hello.');
    expect(toolNames(request)).toEqual(expect.arrayContaining(['exec_command', 'write_stdin', 'request_user_input', 'web_search']));
    expect(toolSchema(request, 'exec_command')).toMatchObject({ type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'] });
    expect(toolSchema(request, 'request_user_input')).toMatchObject({ required: ['questions'] });
  }, 20_000);

  it('runs a scripted exec_command call and sends its output back as function_call_output', async () => {
    const run = await runCodex(
      scriptedResponses([
        { text: 'Running it.', functionCalls: [{ name: 'exec_command', arguments: { cmd: 'echo hi' }, callId: 'call_echo' }] },
        (request) => `The shell said: ${JSON.stringify(lastFunctionCallOutput(request)?.output.split('\n').at(-2))}`,
      ]),
      'Run echo hi.',
    );
    expect(run.code, run.stderr).toBe(0);
    expect(messages(run)).toEqual(['Running it.', 'The shell said: "hi"']);
    const command = run.events.find((e) => e.type === 'item.completed' && e.item?.type === 'command_execution')?.item;
    expect(command).toMatchObject({ command: "/bin/bash -lc 'echo hi'", aggregated_output: 'hi\n', exit_code: 0, status: 'completed' });

    expect(run.requests).toHaveLength(2);
    const [first, second] = run.requests as [ResponsesRequest, ResponsesRequest];
    const replayed = (second.input as Array<Record<string, unknown>>).slice((first.input as unknown[]).length);
    expect(replayed).toEqual([
      { type: 'message', status: 'completed', id: expect.stringMatching(/^msg_/), role: 'assistant', content: [{ type: 'output_text', text: 'Running it.', annotations: [], logprobs: [] }] },
      { type: 'function_call', status: 'completed', id: expect.stringMatching(/^fc_/), name: 'exec_command', arguments: '{"cmd":"echo hi"}', call_id: 'call_echo' },
      { type: 'function_call_output', id: expect.stringMatching(/^fco_/), call_id: 'call_echo', output: expect.stringMatching(/Process exited with code 0\n[\s\S]*Output:\nhi\n$/) },
    ]);
    expect(functionCallOutputs(second).map((o) => o.call_id)).toEqual(['call_echo']);
  }, 20_000);

  it('ends the turn with turn.failed on a wrong key (401) and on response.failed', async () => {
    const refused = await runCodex(scriptedResponses(['never']), 'hi', 'sk-another-key');
    expect(refused.code).toBe(1);
    expect(refused.events.at(-1)).toMatchObject({ type: 'turn.failed', error: { message: expect.stringMatching(/^unexpected status 401 Unauthorized: Incorrect API key provided/) } });
    await server!.close();

    const failed = await runCodex(scriptedResponses([{ failure: { message: 'The model failed midway.' } }]), 'hi');
    expect(failed.code).toBe(1);
    expect(failed.events.at(-1)).toEqual({ type: 'turn.failed', error: { message: 'stream disconnected before completion: The model failed midway.' } });
    expect(failed.requests).toHaveLength(1);
  }, 20_000);
});
