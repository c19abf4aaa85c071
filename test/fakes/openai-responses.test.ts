import OpenAI, { APIError, AuthenticationError, BadRequestError, InternalServerError, RateLimitError } from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import {
  END_OF_SCRIPT,
  functionCallOutputFor,
  functionCallOutputs,
  lastFunctionCallOutput,
  lastUserText,
  scriptedResponses,
  toolNames,
  toolSchema,
  type ResponsesRequest,
  type ScriptedResponsesModel,
} from './openai-responses.js';
import { ARGUMENTS_CHUNK, scriptedChat, startOpenAIServer, TEXT_CHUNK, type OpenAIServer, type OpenAIServerOptions } from './openai-server.js';

const MODEL = 'gpt-5-codex';
const EXEC_TOOL: OpenAI.Responses.FunctionTool = {
  type: 'function',
  name: 'exec_command',
  description: 'Runs a command.',
  strict: false,
  parameters: { type: 'object', properties: { cmd: { type: 'string' } }, required: ['cmd'], additionalProperties: false },
};
const ARGS = { cmd: 'echo hi && echo a somewhat longer line, so the arguments come in several deltas' };

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(
  responses: ScriptedResponsesModel,
  options: Partial<OpenAIServerOptions> = {},
  clientOptions: Partial<ConstructorParameters<typeof OpenAI>[0]> = {},
): Promise<{ server: OpenAIServer; client: OpenAI }> {
  server = await startOpenAIServer({ responses, ...options });
  return { server, client: new OpenAI({ baseURL: server.url, apiKey: 'dummy', maxRetries: 0, ...clientOptions }) };
}

function pieces(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''));
  return out;
}

const RESP_ID = /^resp_[0-9a-f]{48}$/;
const MSG_ID = /^msg_[0-9a-f]{48}$/;
const FC_ID = /^fc_[0-9a-f]{48}$/;
const CALL_ID = /^call_[0-9A-Za-z]{24}$/;

describe('the Responses API of the fake OpenAI server, driven by the openai client', () => {
  it('streams text and function calls as the real event sequence, sequence_number 0, 1, 2, …', async () => {
    const text = 'Let me look at the files first.';
    const { client } = await start(scriptedResponses([{ text, functionCalls: [{ name: 'exec_command', arguments: ARGS }, { name: 'exec_command', arguments: '{"cmd":"ls"}', callId: 'call_fixed' }] }]));
    const stream = await client.responses.create({ model: MODEL, input: 'List the files.', tools: [EXEC_TOOL], stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);

    const argsJson = JSON.stringify(ARGS);
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...pieces(text, TEXT_CHUNK).map(() => 'response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      ...pieces(argsJson, ARGUMENTS_CHUNK).map(() => 'response.function_call_arguments.delta'),
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));

    const created = events[0] as OpenAI.Responses.ResponseCreatedEvent;
    expect(created.response).toMatchObject({ id: expect.stringMatching(RESP_ID), object: 'response', status: 'in_progress', model: MODEL, output: [], usage: null, error: null });
    expect(created.response.tools).toEqual([EXEC_TOOL]);
    expect(Math.abs(created.response.created_at - Date.now() / 1000)).toBeLessThan(5);
    const msgAdded = events[2] as OpenAI.Responses.ResponseOutputItemAddedEvent;
    expect(msgAdded).toEqual({
      type: 'response.output_item.added',
      sequence_number: 2,
      output_index: 0,
      item: { id: expect.stringMatching(MSG_ID), type: 'message', status: 'in_progress', content: [], role: 'assistant' },
    });
    const msgId = msgAdded.item.id;
    expect(events[3]).toEqual({
      type: 'response.content_part.added',
      sequence_number: 3,
      item_id: msgId,
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', annotations: [], logprobs: [], text: '' },
    });
    const deltas = events.filter((e): e is OpenAI.Responses.ResponseTextDeltaEvent => e.type === 'response.output_text.delta');
    expect(deltas.map((d) => d.delta)).toEqual(pieces(text, TEXT_CHUNK));
    for (const d of deltas) expect(d).toMatchObject({ item_id: msgId, output_index: 0, content_index: 0, logprobs: [], obfuscation: expect.stringMatching(/^[0-9A-Za-z]{1,15}$/) });
    expect(events.find((e) => e.type === 'response.output_text.done')).toMatchObject({ item_id: msgId, text, logprobs: [] });

    const fcAdded = events.filter((e): e is OpenAI.Responses.ResponseOutputItemAddedEvent => e.type === 'response.output_item.added')[1]!;
    expect(fcAdded.output_index).toBe(1);
    expect(fcAdded.item).toEqual({ id: expect.stringMatching(FC_ID), type: 'function_call', status: 'in_progress', arguments: '', call_id: expect.stringMatching(CALL_ID), name: 'exec_command' });
    const fcId = fcAdded.item.id!;
    const callId = (fcAdded.item as OpenAI.Responses.ResponseFunctionToolCall).call_id;
    const argDeltas = events.filter((e): e is OpenAI.Responses.ResponseFunctionCallArgumentsDeltaEvent => e.type === 'response.function_call_arguments.delta' && e.output_index === 1);
    expect(argDeltas.map((d) => d.delta)).toEqual(pieces(argsJson, ARGUMENTS_CHUNK));
    expect(argDeltas.length).toBeGreaterThan(2);
    expect(events.find((e) => e.type === 'response.function_call_arguments.done' && e.output_index === 1)).toMatchObject({ item_id: fcId, name: 'exec_command', arguments: argsJson });

    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.response).toMatchObject({ id: created.response.id, status: 'completed', completed_at: expect.any(Number) });
    expect(completed.response.output).toEqual([
      { id: msgId, type: 'message', status: 'completed', content: [{ type: 'output_text', annotations: [], logprobs: [], text }], role: 'assistant' },
      { id: fcId, type: 'function_call', status: 'completed', arguments: argsJson, call_id: callId, name: 'exec_command' },
      { id: expect.stringMatching(FC_ID), type: 'function_call', status: 'completed', arguments: '{"cmd":"ls"}', call_id: 'call_fixed', name: 'exec_command' },
    ]);
    const usage = completed.response.usage!;
    expect(usage).toEqual({
      input_tokens: expect.any(Number),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: expect.any(Number),
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input_tokens + usage.output_tokens,
    });
    // Each output item's done event carries what its deltas built up.
    const dones = events.filter((e): e is OpenAI.Responses.ResponseOutputItemDoneEvent => e.type === 'response.output_item.done');
    expect(dones.map((d) => d.item)).toEqual(completed.response.output);
  });

  it('writes `event:` and `data:` lines like the real API: the type twice, no [DONE]; obfuscation can be turned off', async () => {
    const { server } = await start(scriptedResponses(['Hi', 'Hi']));
    const post = (body: Record<string, unknown>) =>
      fetch(`${server.url}/responses`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, input: 'hi', stream: true, ...body }) });
    const response = await post({});
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    const blocks = (await response.text()).split('\n\n');
    expect(blocks.at(-1)).toBe('');
    const parsed = blocks.slice(0, -1).map((block) => {
      const match = /^event: ([a-z_.]+)\ndata: (\{.*\})$/.exec(block);
      expect(match, block).not.toBeNull();
      const data = JSON.parse(match![2]!) as { type: string; sequence_number: number };
      expect(data.type).toBe(match![1]);
      return data;
    });
    expect(parsed).toHaveLength(9); // created, in_progress, item added, part added, one delta, text done, part done, item done, completed
    expect(parsed.map((e) => e.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parsed[4]).toHaveProperty('obfuscation');
    const plain = await (await post({ stream_options: { include_obfuscation: false } })).text();
    expect(plain).toContain('response.output_text.delta');
    expect(plain).not.toContain('obfuscation');
  });

  it("the stream() helper's finalResponse() has output_text and the whole function call", async () => {
    const { client } = await start(scriptedResponses([{ text: 'Running it.', functionCalls: [{ name: 'exec_command', arguments: ARGS }] }]));
    const stream = client.responses.stream({ model: MODEL, input: 'go', tools: [EXEC_TOOL] });
    const snapshots: string[] = [];
    stream.on('response.function_call_arguments.delta', (event) => snapshots.push(event.snapshot));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('Running it.');
    const call = final.output[1];
    expect(call).toMatchObject({ type: 'function_call', name: 'exec_command', arguments: JSON.stringify(ARGS), call_id: expect.stringMatching(CALL_ID) });
    expect(snapshots.at(-1)).toBe(JSON.stringify(ARGS));
  });

  it('answers without stream with the whole response object; the next request carries the function_call_output', async () => {
    const { server, client } = await start(
      scriptedResponses([
        { functionCalls: [{ name: 'exec_command', arguments: { cmd: 'echo hi' }, callId: 'call_one' }] },
        (request) => `The command printed ${JSON.stringify(lastFunctionCallOutput(request)?.output)}.`,
      ]),
    );
    const { data: first, request_id } = await client.responses.create({ model: MODEL, input: 'Say hi in the shell.', tools: [EXEC_TOOL], store: false }).withResponse();
    expect(request_id).toMatch(/^req_[0-9A-Za-z]{32}$/);
    expect(first).toMatchObject({
      id: expect.stringMatching(RESP_ID),
      object: 'response',
      status: 'completed',
      model: MODEL,
      store: false,
      tool_choice: 'auto',
      parallel_tool_calls: true,
      error: null,
      incomplete_details: null,
      instructions: null,
      tools: [EXEC_TOOL],
      output: [{ id: expect.stringMatching(FC_ID), type: 'function_call', status: 'completed', arguments: '{"cmd":"echo hi"}', call_id: 'call_one', name: 'exec_command' }],
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
    });
    expect(first.output_text).toBe(''); // the client's convenience field: no message, no text

    const input: OpenAI.Responses.ResponseInput = [
      { role: 'user', content: 'Say hi in the shell.' },
      ...(first.output as OpenAI.Responses.ResponseInputItem[]),
      { type: 'function_call_output', call_id: 'call_one', output: 'hi\n' },
    ];
    const second = await client.responses.create({ model: MODEL, input, tools: [EXEC_TOOL] });
    expect(second.output_text).toBe('The command printed "hi\\n".');
    expect(second.output).toEqual([
      { id: expect.stringMatching(MSG_ID), type: 'message', status: 'completed', content: [{ type: 'output_text', annotations: [], logprobs: [], text: second.output_text }], role: 'assistant' },
    ]);

    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/responses', 'POST /v1/responses']);
    const sent = server.requests[1]!.body as ResponsesRequest;
    expect(functionCallOutputs(sent)).toEqual([{ call_id: 'call_one', output: 'hi\n' }]);
    expect(lastUserText(sent)).toBe('Say hi in the shell.');
    expect(functionCallOutputFor(server.requests, 'call_one')).toBe('hi\n');
    expect(functionCallOutputFor(server.requests, 'call_other')).toBeUndefined();
    expect(server.requests[0]!.headers.authorization).toBe('Bearer dummy');
  });

  it('serves chat completions and Responses side by side: each API its own model and count; the models list learns both', async () => {
    const seen: number[] = [];
    const { client } = await start(
      (_, index) => {
        seen.push(index);
        return { text: `responses #${index}` };
      },
      { model: scriptedChat(['chat #0', 'chat #1']) },
    );
    expect((await client.chat.completions.create({ model: 'gpt-chat', messages: [{ role: 'user', content: 'hi' }] })).choices[0]!.message.content).toBe('chat #0');
    expect((await client.responses.create({ model: MODEL, input: 'hi' })).output_text).toBe('responses #0');
    expect((await client.responses.create({ model: MODEL, input: 'hi' })).output_text).toBe('responses #1');
    expect(seen).toEqual([0, 1]);
    expect((await client.models.list()).data.map((m) => m.id)).toEqual(['gpt-scripted', 'gpt-chat', MODEL]);
    // Without the /v1 prefix too (a base URL given without it).
    const root = server!.url.replace(/\/v1$/, '');
    const bare = await fetch(`${root}/responses`, { method: 'POST', body: JSON.stringify({ model: MODEL, input: 'hi' }) });
    expect(((await bare.json()) as OpenAI.Responses.Response).output[0]).toMatchObject({ type: 'message' });
  });

  it('404s POST /responses on a server without a `responses` model, and /chat/completions on one without `model`', async () => {
    const { client } = await start(scriptedResponses([]));
    const chat = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect((chat as APIError).status).toBe(404);
    const chatOnly = await startOpenAIServer({ model: scriptedChat([]) });
    try {
      const response = await fetch(`${chatOnly.url}/responses`, { method: 'POST', body: JSON.stringify({ model: MODEL, input: 'hi' }) });
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: { message: 'Invalid URL (POST /v1/responses)', type: 'invalid_request_error', param: null, code: null } });
    } finally {
      await chatOnly.close();
    }
  });
});

/** POST /responses with fetch. */
const post = (url: string, { stream = true, key = 'dummy' as string | null } = {}) =>
  fetch(`${url}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
    body: JSON.stringify({ model: MODEL, input: 'hi', stream }),
  });

describe('the Responses API fails like the real one', () => {
  it('checks the API key: 401 invalid_api_key for a wrong one (never reaching the model), code null for none', async () => {
    const { server, client } = await start(scriptedResponses(['ok']), { apiKey: 'sk-right' });
    const error = await client.responses.create({ model: MODEL, input: 'hi' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as APIError).error).toEqual({
      message: 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
      type: 'invalid_request_error',
      param: null,
      code: 'invalid_api_key',
    });
    const none = await post(server.url, { key: null });
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { code: unknown } }).error.code).toBeNull();
    const right = new OpenAI({ baseURL: server.url, apiKey: 'sk-right', maxRetries: 0 });
    expect((await right.responses.create({ model: MODEL, input: 'hi' })).output_text).toBe('ok');
    expect(server.requests).toHaveLength(3);
  });

  it('429 with retry-after (and retry-after-ms): the client throws RateLimitError, or waits and retries', async () => {
    const limited = { error: { status: 429, message: 'Rate limit reached for requests', retryAfter: 7 } };
    const { server, client } = await start(scriptedResponses([limited, limited]));
    const raw = await post(server.url);
    expect(raw.status).toBe(429);
    expect(raw.headers.get('retry-after')).toBe('7');
    expect(await raw.json()).toEqual({ error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' } });
    const error = await client.responses.create({ model: MODEL, input: 'hi', stream: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as APIError).headers?.get('retry-after')).toBe('7');

    const retried = await start(scriptedResponses([{ error: { status: 429, message: 'slow down', retryAfter: 0, retryAfterMs: 5 } }, 'second try']), {}, { maxRetries: 1 });
    expect((await retried.client.responses.create({ model: MODEL, input: 'hi' })).output_text).toBe('second try');
    expect(retried.server.requests[1]!.headers['x-stainless-retry-count']).toBe('1');
  });

  it('500 in OpenAI\'s shape; a throwing model is a 500 server_error', async () => {
    const { client } = await start(
      scriptedResponses([
        { error: { status: 500, message: 'The server had an error while processing your request. Sorry about that!' } },
        () => {
          throw new Error('boom');
        },
      ]),
    );
    const five = await client.responses.create({ model: MODEL, input: 'hi', stream: true }).catch((e: unknown) => e);
    expect(five).toBeInstanceOf(InternalServerError);
    expect((five as APIError).error).toEqual({ message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null });
    const thrown = await client.responses.create({ model: MODEL, input: 'hi' }).catch((e: unknown) => e);
    expect((thrown as APIError).error).toMatchObject({ message: 'scripted model failed: boom', type: 'server_error' });
  });

  it('a failure after the start: created, in_progress, then response.failed with the error; without stream a 500', async () => {
    const failure = { message: 'The model produced invalid content.', code: 'server_error' };
    const { server, client } = await start(scriptedResponses([{ text: 'never sent', failure }, { failure }]));
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ model: MODEL, input: 'hi', stream: true })) events.push(event);
    expect(events.map((e) => `${e.sequence_number}:${e.type}`)).toEqual(['0:response.created', '1:response.in_progress', '2:response.failed']);
    expect((events[2] as OpenAI.Responses.ResponseFailedEvent).response).toMatchObject({ status: 'failed', error: { code: 'server_error', message: failure.message }, output: [] });
    const whole = await post(server.url, { stream: false });
    expect(whole.status).toBe(500);
    expect(((await whole.json()) as { error: { message: string } }).error.message).toBe(failure.message);
  });

  it('refuses malformed requests with 400: not JSON, no model, an input that is neither string nor array', async () => {
    const { client, server } = await start(scriptedResponses([]));
    const notJson = await fetch(`${server.url}/responses`, { method: 'POST', body: '{oops' });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { message: string } }).error.message).toMatch(/^We could not parse the JSON body of your request/);
    const noModel = await client.responses.create({ input: 'hi' } as OpenAI.Responses.ResponseCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(noModel).toBeInstanceOf(BadRequestError);
    expect((noModel as APIError).error).toEqual({ message: "Missing required parameter: 'model'.", type: 'invalid_request_error', param: 'model', code: 'missing_required_parameter' });
    const badInput = await fetch(`${server.url}/responses`, { method: 'POST', body: JSON.stringify({ model: MODEL, input: 42 }) });
    expect(((await badInput.json()) as { error: { param: string } }).error.param).toBe('input');
    expect(server.requests.map((r) => r.body)).toContain('{oops');
  });
});

describe('Responses script helpers', () => {
  const call = (id: string) => ({ type: 'function_call', id: `fc_${id}`, call_id: id, name: 'exec_command', arguments: '{}' });

  it('functionCallOutputs reads the trailing calls and outputs (parallel calls, reasoning between, content parts)', () => {
    const request: ResponsesRequest = {
      model: MODEL,
      input: [
        { role: 'user', content: 'go' },
        call('call_old'),
        { type: 'function_call_output', call_id: 'call_old', output: 'old' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
        { type: 'reasoning', id: 'rs_1', summary: [] },
        call('call_1'),
        call('call_2'),
        { type: 'function_call_output', call_id: 'call_1', output: 'one' },
        { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'first' }, { type: 'input_text', text: 'second' }] },
      ],
    };
    expect(functionCallOutputs(request)).toEqual([
      { call_id: 'call_1', output: 'one' },
      { call_id: 'call_2', output: 'first\n\nsecond' },
    ]);
    expect(lastFunctionCallOutput(request)).toEqual({ call_id: 'call_2', output: 'first\n\nsecond' });
    expect(functionCallOutputs({ input: [{ role: 'user', content: 'go' }, call('c')] })).toEqual([]);
    expect(lastFunctionCallOutput({ input: 'just text' })).toBeUndefined();
  });

  it('lastUserText reads string input, easy-input messages and input_text parts; toolNames and toolSchema read the tools', () => {
    expect(lastUserText({ input: 'plain' })).toBe('plain');
    expect(lastUserText({ input: [{ role: 'user', content: 'easy' }, { role: 'assistant', content: 'reply' }] })).toBe('easy');
    expect(lastUserText({ input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'a' }, { type: 'input_image', image_url: 'x' }, { type: 'input_text', text: 'b' }] }] })).toBe('a\n\nb');
    expect(lastUserText({ input: [{ type: 'message', role: 'developer', content: 'only dev' }] })).toBe('');
    const tools = [EXEC_TOOL, { type: 'namespace', name: 'multi_agent_v1', tools: [] }, { type: 'web_search', external_web_access: true }];
    expect(toolNames({ tools })).toEqual(['exec_command', 'multi_agent_v1', 'web_search']);
    expect(toolNames({})).toEqual([]);
    expect(toolSchema({ tools }, 'exec_command')).toEqual(EXEC_TOOL.parameters);
    expect(toolSchema({ tools }, 'multi_agent_v1')).toBeUndefined();
  });

  it('scriptedResponses plays its steps in order (replies, strings, functions), then "(end of script)"', async () => {
    const model = scriptedResponses([{ functionCalls: [{ name: 'exec_command', arguments: { cmd: 'ls' } }] }, (r, index) => `saw "${lastUserText(r)}" at ${index}`]);
    const r: ResponsesRequest = { model: MODEL, input: 'go' };
    expect(await model(r, 0)).toEqual({ functionCalls: [{ name: 'exec_command', arguments: { cmd: 'ls' } }] });
    expect(await model(r, 1)).toEqual({ text: 'saw "go" at 1' });
    expect(await model(r, 2)).toEqual({ text: END_OF_SCRIPT });
  });
});
