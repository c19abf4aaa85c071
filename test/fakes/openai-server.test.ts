import { approveAll, CopilotClient, type PermissionRequest, type SessionEvent } from '@github/copilot-sdk';
import OpenAI, { APIError, AuthenticationError, BadRequestError, InternalServerError, NotFoundError, RateLimitError } from 'openai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ARGUMENTS_CHUNK,
  DEFAULT_MODEL,
  DEMO_ASK,
  demoChatModel,
  END_OF_SCRIPT,
  lastToolMessage,
  lastToolMessages,
  lastUserText,
  scriptedChat,
  startOpenAIServer,
  stripCopilotContext,
  TEXT_CHUNK,
  toolNames,
  toolSchema,
  type ChatRequest,
  type OpenAIServer,
  type OpenAIServerOptions,
  type ScriptedChatModel,
} from './openai-server.js';

const MODEL = 'gpt-5.1';
const ASK = { question: 'Which database?', choices: ['PostgreSQL', 'SQLite'], multi_select: false };
const ASK_SCHEMA = {
  type: 'object',
  properties: { question: { type: 'string' }, choices: { type: 'array', items: { type: 'string' } }, multi_select: { type: 'boolean' } },
  required: ['question'],
};
const ASK_TOOL: OpenAI.ChatCompletionTool = { type: 'function', function: { name: 'ask_user', description: 'Ask the user.', parameters: ASK_SCHEMA } };
const BASH_TOOL: OpenAI.ChatCompletionTool = { type: 'function', function: { name: 'bash', parameters: { type: 'object', properties: {} } } };
const SELECTED = 'User selected: PostgreSQL';

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(
  model: ScriptedChatModel,
  options: Partial<OpenAIServerOptions> = {},
  clientOptions: Partial<ConstructorParameters<typeof OpenAI>[0]> = {},
): Promise<{ server: OpenAIServer; client: OpenAI }> {
  server = await startOpenAIServer({ model, ...options });
  return { server, client: new OpenAI({ baseURL: server.url, apiKey: 'dummy', maxRetries: 0, ...clientOptions }) };
}

const ask = (text: string): OpenAI.ChatCompletionMessageParam[] => [{ role: 'user', content: text }];

function pieces(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''));
  return out;
}

/** A compact name for a chunk's delta, for comparing chunk sequences. */
function label(chunk: OpenAI.ChatCompletionChunk): string {
  const choice = chunk.choices[0];
  if (!choice) return 'usage';
  if (choice.finish_reason) return `finish:${choice.finish_reason}`;
  const { delta } = choice;
  const parts: string[] = [];
  if (delta.role) parts.push(`role:${JSON.stringify(delta.content)}`);
  else if (delta.content !== undefined) parts.push('content');
  for (const call of delta.tool_calls ?? []) parts.push(call.id ? `tool_call#${call.index}` : `arguments#${call.index}`);
  return parts.join('+');
}

describe('the fake OpenAI server, driven by the openai client', () => {
  it('streams text and tool calls as chat.completion.chunk objects, in order, then [DONE]', async () => {
    const args = { ...ASK, note: 'A little longer, so the arguments arrive in several fragments.' };
    const { client } = await start(
      scriptedChat([{ text: 'Let me ask you first.', toolCalls: [{ name: 'ask_user', arguments: args }, { name: 'bash', arguments: '{"command":"ls"}' }] }]),
    );
    const stream = await client.chat.completions.create({ model: MODEL, messages: ask('Pick a database.'), tools: [ASK_TOOL, BASH_TOOL], stream: true });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    const argsJson = JSON.stringify(args);
    expect(chunks.map(label)).toEqual([
      'role:""',
      ...pieces('Let me ask you first.', TEXT_CHUNK).map(() => 'content'),
      'tool_call#0',
      ...pieces(argsJson, ARGUMENTS_CHUNK).map(() => 'arguments#0'),
      'tool_call#1',
      'arguments#1',
      'finish:tool_calls',
    ]);
    const first = chunks[0]!;
    expect(first).toEqual({
      id: expect.stringMatching(/^chatcmpl-[0-9A-Za-z]{29}$/),
      object: 'chat.completion.chunk',
      created: expect.any(Number),
      model: MODEL,
      service_tier: 'default',
      system_fingerprint: expect.stringMatching(/^fp_[0-9a-f]{10}$/),
      choices: [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }],
    });
    expect(Math.abs(first.created - Date.now() / 1000)).toBeLessThan(5);
    // one completion: every chunk shares id, created, model and fingerprint
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({ id: first.id, created: first.created, model: MODEL, system_fingerprint: first.system_fingerprint });
      expect(chunk).not.toHaveProperty('usage');
    }
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(content).toBe('Let me ask you first.');
    const start0 = chunks.find((c) => c.choices[0]?.delta.tool_calls?.[0]?.id)!.choices[0]!.delta.tool_calls![0]!;
    expect(start0).toEqual({ index: 0, id: expect.stringMatching(/^call_[0-9A-Za-z]{24}$/), type: 'function', function: { name: 'ask_user', arguments: '' } });
    const fragments = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls?.filter((t) => t.index === 0 && !t.id).map((t) => t.function!.arguments!) ?? []);
    expect(fragments).toEqual(pieces(argsJson, ARGUMENTS_CHUNK));
    expect(fragments.length).toBeGreaterThan(2);
    expect(chunks.at(-1)!.choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }]);
  });

  it('puts a lone tool call into the role chunk with content null, like the real API', async () => {
    const { client } = await start(scriptedChat([{ toolCalls: [{ name: 'ask_user', arguments: ASK, id: 'call_fixed' }] }]));
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of await client.chat.completions.create({ model: MODEL, messages: ask('hi'), stream: true })) chunks.push(chunk);
    expect(chunks[0]!.choices[0]!.delta).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ index: 0, id: 'call_fixed', type: 'function', function: { name: 'ask_user', arguments: '' } }],
      refusal: null,
    });
    expect(chunks.map(label).slice(1)).toEqual([...pieces(JSON.stringify(ASK), ARGUMENTS_CHUNK).map(() => 'arguments#0'), 'finish:tool_calls']);
  });

  it("the stream() helper's finalChatCompletion() has the whole tool call; the next request carries the tool message", async () => {
    const { server, client } = await start(
      scriptedChat([{ toolCalls: [{ name: 'ask_user', arguments: ASK }] }, (request) => `Thanks — ${lastToolMessage(request)?.content}`]),
    );
    const messages = ask('Pick a database for me.');
    const stream = client.chat.completions.stream({ model: MODEL, messages, tools: [ASK_TOOL] });
    const argumentDeltas: string[] = [];
    stream.on('tool_calls.function.arguments.delta', (event) => argumentDeltas.push(event.arguments_delta));
    const first = await stream.finalChatCompletion();

    expect(first).toMatchObject({ object: 'chat.completion', model: MODEL, choices: [{ index: 0, finish_reason: 'tool_calls' }] });
    const message = first.choices[0]!.message;
    expect(message.role).toBe('assistant');
    expect(message.tool_calls).toEqual([
      { id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'ask_user', arguments: JSON.stringify(ASK) } },
    ]);
    // the client reports the start chunk's empty `arguments: ""` as a delta of its own
    expect(argumentDeltas).toEqual(['', ...pieces(JSON.stringify(ASK), ARGUMENTS_CHUNK)]);
    const call = message.tool_calls![0]!;
    if (call.type !== 'function') throw new Error('expected a function call');
    expect(JSON.parse(call.function.arguments)).toEqual(ASK);

    messages.push({ role: 'assistant', content: message.content, tool_calls: message.tool_calls }, { role: 'tool', tool_call_id: call.id, content: SELECTED });
    const second = await client.chat.completions.stream({ model: MODEL, messages, tools: [ASK_TOOL] }).finalChatCompletion();
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: `Thanks — ${SELECTED}` } });

    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/chat/completions', 'POST /v1/chat/completions']);
    const sent = server.requests[1]!.body as ChatRequest;
    expect(sent.stream).toBe(true);
    expect(sent.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: call.id, content: SELECTED });
    expect(lastToolMessages(sent)).toEqual([{ tool_call_id: call.id, content: SELECTED }]);
    expect(server.requests[0]!.headers.authorization).toBe('Bearer dummy');
  });

  it('answers without stream with the whole chat.completion; raw arguments go out verbatim', async () => {
    const broken = '{"question": "Which database?", oops';
    const { client } = await start(
      scriptedChat([
        { toolCalls: [{ name: 'ask_user', arguments: broken, id: 'call_broken' }] },
        { text: 'Cut short', finishReason: 'length' },
      ]),
    );
    const { data, request_id } = await client.chat.completions.create({ model: MODEL, messages: ask('hi'), tools: [ASK_TOOL] }).withResponse();
    expect(request_id).toMatch(/^req_[0-9A-Za-z]{32}$/);
    expect(data).toEqual({
      id: expect.stringMatching(/^chatcmpl-/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: MODEL,
      service_tier: 'default',
      system_fingerprint: expect.stringMatching(/^fp_/),
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            annotations: [],
            tool_calls: [{ id: 'call_broken', type: 'function', function: { name: 'ask_user', arguments: broken } }],
          },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: {
        prompt_tokens: expect.any(Number),
        completion_tokens: expect.any(Number),
        total_tokens: expect.any(Number),
        prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      },
    });
    expect(data.usage!.total_tokens).toBe(data.usage!.prompt_tokens + data.usage!.completion_tokens);
    const cut = await client.chat.completions.create({ model: MODEL, messages: ask('again') });
    expect(cut.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'Cut short' } });
  });

  it('sends a last usage chunk with choices [] when stream_options.include_usage is set', async () => {
    const { client } = await start(scriptedChat(['Hello there, this is a streamed reply.']));
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: ask('hi'),
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const chunk of stream) chunks.push(chunk);
    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
    expect(usageChunk.id).toBe(chunks[0]!.id);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.usage).toBeNull();
    expect(chunks.at(-2)!.choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello there, this is a streamed reply.');
  });

  it('writes the SSE stream byte for byte like OpenAI: data lines only, ending in data: [DONE]', async () => {
    const { server } = await start(scriptedChat(['Hi']));
    const response = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true }),
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const text = await response.text();
    const events = text.split('\n\n');
    expect(events.at(-1)).toBe('');
    expect(events.at(-2)).toBe('data: [DONE]');
    for (const event of events.slice(0, -2)) expect(event).toMatch(/^data: \{.*\}$/);
    expect(events.length).toBe(5); // role, "Hi", finish, [DONE], ''
  });

  it('also answers without the /v1 prefix (the Copilot SDK posts to {baseUrl}/chat/completions)', async () => {
    const { server } = await start(scriptedChat(['one']));
    const root = server.url.replace(/\/v1$/, '');
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const response = await fetch(`${root}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: MODEL, messages: ask('hi') }) });
    expect(((await response.json()) as OpenAI.ChatCompletion).choices[0]!.message.content).toBe('one');
    const models = await fetch(`${root}/models`);
    expect(((await models.json()) as { object: string }).object).toBe('list');
  });

  it('lists the configured and requested models on GET /v1/models and retrieves any one', async () => {
    const { client } = await start(scriptedChat(['ok']), { models: ['gpt-a', 'gpt-b'] });
    expect((await client.models.list()).data.map((m) => m.id)).toEqual(['gpt-a', 'gpt-b']);
    await client.chat.completions.create({ model: MODEL, messages: ask('hi') });
    const list = await client.models.list();
    expect(list.data.map((m) => m.id)).toEqual(['gpt-a', 'gpt-b', MODEL]);
    expect(list.data[0]).toEqual({ id: 'gpt-a', object: 'model', created: expect.any(Number), owned_by: 'askrelay' });
    expect(await client.models.retrieve('o-anything')).toMatchObject({ id: 'o-anything', object: 'model' });
    const { client: plain } = await start(scriptedChat([]));
    expect((await plain.models.list()).data.map((m) => m.id)).toEqual([DEFAULT_MODEL]);
  });

  it("answers other paths with a 404 in OpenAI's error shape", async () => {
    const { client, server } = await start(scriptedChat([]));
    const error = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as APIError).error).toEqual({ message: 'Invalid URL (POST /v1/embeddings)', type: 'invalid_request_error', param: null, code: null });
    const raw = await fetch(`${server.url}/responses`, { method: 'GET' });
    expect(raw.status).toBe(404);
    expect(await raw.json()).toEqual({ error: { message: 'Invalid URL (GET /v1/responses)', type: 'invalid_request_error', param: null, code: null } });
  });
});

/** POST /chat/completions with fetch, streaming unless `stream` is false. */
const post = (url: string, { stream = true, key = 'dummy' }: { stream?: boolean; key?: string | null } = {}) =>
  fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
    body: JSON.stringify({ model: MODEL, messages: ask('hi'), stream }),
  });

/** Reads a body until it ends or breaks: the text that arrived, and the error that broke it. */
async function readAll(response: Response): Promise<{ text: string; broke?: unknown }> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text };
      text += decoder.decode(value, { stream: true });
    }
  } catch (broke) {
    return { text, broke };
  }
}

// OpenAI's error bodies (https://platform.openai.com/docs/guides/error-codes): `{error:
// {message, type, param, code}}`; 429 `rate_limit_exceeded` with `retry-after` (seconds) and
// `retry-after-ms`; 503 `service_unavailable_error` / `server_is_overloaded`; 401
// `invalid_api_key`. A request failing mid-stream ends the stream with one
// `data: {"error": {…}}` line and no `[DONE]`, which the `openai` client throws as an APIError
// without a status.
describe('the fake OpenAI server fails like the real API', () => {
  it('429: retry-after and retry-after-ms headers, the rate-limit body; the client waits retry-after-ms and retries', async () => {
    const limited = { error: { status: 429, message: 'Rate limit reached for requests', retryAfter: 7, retryAfterMs: 6500 } };
    const { server, client } = await start(scriptedChat([limited, limited, 'after the limit']));
    const raw = await post(server.url);
    expect(raw.status).toBe(429);
    expect(raw.headers.get('content-type')).toBe('application/json');
    expect(raw.headers.get('retry-after')).toBe('7');
    expect(raw.headers.get('retry-after-ms')).toBe('6500');
    expect(await raw.json()).toEqual({ error: { message: 'Rate limit reached for requests', type: 'requests', param: null, code: 'rate_limit_exceeded' } });

    const error = await client.chat.completions.create({ model: MODEL, messages: ask('hi') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as APIError).code).toBe('rate_limit_exceeded');
    expect((error as APIError).headers?.get('retry-after')).toBe('7');

    const retried = await start(
      scriptedChat([{ error: { status: 429, message: 'slow down', retryAfter: 0, retryAfterMs: 5 } }, 'second try']),
      {},
      { maxRetries: 1 },
    );
    const completion = await retried.client.chat.completions.create({ model: MODEL, messages: ask('hi') });
    expect(completion.choices[0]!.message.content).toBe('second try');
    expect(retried.server.requests).toHaveLength(2);
    expect(retried.server.requests[1]!.headers['x-stainless-retry-count']).toBe('1');
  });

  it('500 and 503 in OpenAI\'s shape; a throwing model is a 500 server_error', async () => {
    const { server, client } = await start(
      scriptedChat([
        { error: { status: 500, message: 'The server had an error while processing your request. Sorry about that!' } },
        { error: { status: 503, message: 'The engine is currently overloaded, please try again later.' } },
        () => {
          throw new Error('boom');
        },
      ]),
    );
    const five = await post(server.url);
    expect(five.status).toBe(500);
    expect(await five.json()).toEqual({
      error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null },
    });
    const overloaded = await post(server.url, { stream: false });
    expect(overloaded.status).toBe(503);
    expect(await overloaded.json()).toEqual({
      error: { message: 'The engine is currently overloaded, please try again later.', type: 'service_unavailable_error', param: null, code: 'server_is_overloaded' },
    });
    const failed = await client.chat.completions.create({ model: MODEL, messages: ask('hi'), stream: true }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(InternalServerError);
    expect((failed as APIError).error).toEqual({ message: 'scripted model failed: boom', type: 'server_error', param: null, code: null });
  });

  it('an error inside a stream: N chunks, one data: {"error": …} line, no [DONE]; the client throws it as an APIError without status', async () => {
    const streamError = { afterChunks: 2, message: 'The server had an error while processing your request.', code: 'server_error' };
    const { server, client } = await start(scriptedChat([{ text: 'Hello there, world', streamError }, { text: 'Hello there, world', streamError }, { text: 'x', streamError }]));
    const raw = await post(server.url);
    expect(raw.status).toBe(200);
    const events = (await raw.text()).split('\n\n');
    expect(events).toHaveLength(4); // role, one content chunk, the error, ''
    expect(events.slice(0, 2).map((e) => (JSON.parse(e.replace(/^data: /, '')) as { object: string }).object)).toEqual(['chat.completion.chunk', 'chat.completion.chunk']);
    expect(events[2]).toBe(`data: ${JSON.stringify({ error: { message: streamError.message, type: 'server_error', param: null, code: 'server_error' } })}`);
    expect(events[3]).toBe('');

    const chunks: OpenAI.ChatCompletionChunk[] = [];
    const error = await (async () => {
      for await (const chunk of await client.chat.completions.create({ model: MODEL, messages: ask('hi'), stream: true })) chunks.push(chunk);
    })().catch((e: unknown) => e);
    expect(chunks.map(label)).toEqual(['role:""', 'content']);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBeUndefined();
    expect((error as APIError).message).toBe(streamError.message);
    expect((error as APIError).error).toEqual({ message: streamError.message, type: 'server_error', param: null, code: 'server_error' });
    // Without stream the same failure is a 500 with that body.
    const whole = await post(server.url, { stream: false });
    expect(whole.status).toBe(500);
    expect(((await whole.json()) as { error: { message: string } }).error.message).toBe(streamError.message);
  });

  it('a stream cut mid-answer: 200, N chunks, then the connection breaks (no finish chunk, no [DONE])', async () => {
    const { server, client } = await start(
      scriptedChat([{ text: 'Hello there, world', cutAfterChunks: 2 }, { text: 'Hello there, world', cutAfterChunks: 0 }, { text: 'Hello', cutAfterChunks: 1 }, { text: 'x', cutAfterChunks: 1 }]),
    );
    const raw = await post(server.url);
    expect(raw.status).toBe(200);
    const { text, broke } = await readAll(raw);
    expect(text.split('\n\n').slice(0, -1)).toHaveLength(2);
    expect(text).not.toContain('[DONE]');
    expect(text).not.toContain('finish_reason":"stop');
    expect(broke).toBeInstanceOf(TypeError);
    expect((broke as Error).message).toBe('terminated');

    const nothing = await post(server.url);
    expect(nothing.status).toBe(200);
    expect(await readAll(nothing)).toEqual({ text: '', broke: expect.any(TypeError) });

    const chunks: OpenAI.ChatCompletionChunk[] = [];
    const error = await (async () => {
      for await (const chunk of await client.chat.completions.create({ model: MODEL, messages: ask('hi'), stream: true })) chunks.push(chunk);
    })().catch((e: unknown) => e);
    expect(chunks.map(label)).toEqual(['role:""']);
    expect((error as Error).message).toBe('terminated');
    // Without stream the socket breaks before any response.
    await expect(post(server.url, { stream: false })).rejects.toThrow('fetch failed');
  });

  it('checks the API key when one is configured: 401 invalid_api_key for a wrong one, code null for none', async () => {
    const { server: keyed, client } = await start(scriptedChat(['ok']), { apiKey: 'sk-right' });
    const wrong = await post(keyed.url, { key: 'sk-wrong' });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual({
      error: {
        message: 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      },
    });
    const none = await post(keyed.url, { key: null });
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { code: unknown; message: string } }).error).toMatchObject({
      code: null,
      message: expect.stringMatching(/^You didn't provide an API key\./),
    });
    const error = await client.chat.completions.create({ model: MODEL, messages: ask('hi') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as APIError).code).toBe('invalid_api_key');
    const right = new OpenAI({ baseURL: keyed.url, apiKey: 'sk-right', maxRetries: 0 });
    expect((await right.chat.completions.create({ model: MODEL, messages: ask('hi') })).choices[0]!.message.content).toBe('ok');
    // Refused requests are logged but never reach the model: the right key's got its first step.
    expect(keyed.requests).toHaveLength(4);
  });

  it('refuses malformed requests with 400', async () => {
    const { client, server } = await start(scriptedChat([]));
    const notJson = await fetch(`${server.url}/chat/completions`, { method: 'POST', body: '{oops' });
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { message: string } }).error.message).toMatch(/^We could not parse the JSON body of your request/);
    const noMessages = await client.chat.completions.create({ model: MODEL } as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(noMessages).toBeInstanceOf(BadRequestError);
    expect((noMessages as APIError).error).toEqual({
      message: "Missing required parameter: 'messages'.",
      type: 'invalid_request_error',
      param: 'messages',
      code: 'missing_required_parameter',
    });
    expect(server.requests.map((r) => r.body)).toContain('{oops');
  });
});

describe('scripted model helpers', () => {
  const request = (messages: OpenAI.ChatCompletionMessageParam[], tools?: OpenAI.ChatCompletionTool[]): OpenAI.ChatCompletionCreateParams => ({
    model: MODEL,
    messages,
    ...(tools ? { tools } : {}),
  });
  const call = (id: string): OpenAI.ChatCompletionMessageParam => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id, type: 'function', function: { name: 'ask_user', arguments: '{}' } }],
  });

  it('lastToolMessages reads the tool messages after the last assistant message, normalizing content', () => {
    const r = request([
      { role: 'user', content: 'go' },
      call('call_old'),
      { role: 'tool', tool_call_id: 'call_old', content: 'old' },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'again' },
      call('call_1'),
      { role: 'tool', tool_call_id: 'call_1', content: SELECTED },
      { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: 'first' }, { type: 'text', text: 'second' }] },
    ]);
    expect(lastToolMessages(r)).toEqual([
      { tool_call_id: 'call_1', content: SELECTED },
      { tool_call_id: 'call_2', content: 'first\n\nsecond' },
    ]);
    expect(lastToolMessage(r)).toEqual({ tool_call_id: 'call_2', content: 'first\n\nsecond' });
    expect(lastToolMessages(request([{ role: 'user', content: 'go' }, call('call_3')]))).toEqual([]);
    expect(lastToolMessages(request([call('c'), { role: 'tool', tool_call_id: 'c', content: 'r' }, { role: 'assistant', content: 'done' }]))).toEqual([]);
    expect(lastToolMessage(request([]))).toBeUndefined();
  });

  it("lastUserText drops Copilot's <current_datetime> block; toolNames and toolSchema read the offered tools", () => {
    const copilot = request(
      [
        { role: 'system', content: 'You are GitHub Copilot.' },
        { role: 'user', content: '<current_datetime>2026-11-30T16:06:38.179+00:00</current_datetime>\n\nPick a database for me.' },
      ],
      [BASH_TOOL, ASK_TOOL],
    );
    expect(lastUserText(copilot)).toBe('Pick a database for me.');
    expect(lastUserText(request([{ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }, call('x')]))).toBe('a\n\nb');
    expect(lastUserText(request([{ role: 'system', content: 'only system' }]))).toBe('');
    expect(stripCopilotContext('plain <current_datetime>x</current_datetime>')).toBe('plain <current_datetime>x</current_datetime>');
    expect(toolNames(copilot)).toEqual(['bash', 'ask_user']);
    expect(toolNames(request([]))).toEqual([]);
    expect(toolSchema(copilot, 'ask_user')).toEqual(ASK_SCHEMA);
    expect(toolSchema(copilot, 'missing')).toBeUndefined();
  });

  it('scriptedChat plays its steps in order (replies, strings, functions), then "(end of script)"', async () => {
    const model = scriptedChat([
      { toolCalls: [{ name: 'ask_user', arguments: ASK }] },
      (r, index) => `step 2 saw "${lastUserText(r)}" at ${index}`,
      async () => ({ text: 'Out of room', finishReason: 'length' }),
    ]);
    const r: ChatRequest = { model: MODEL, messages: [{ role: 'user', content: 'go' }] };
    expect(await model(r, 0)).toEqual({ toolCalls: [{ name: 'ask_user', arguments: ASK }] });
    expect(await model(r, 1)).toEqual({ text: 'step 2 saw "go" at 1' });
    expect(await model(r, 2)).toEqual({ text: 'Out of room', finishReason: 'length' });
    expect(await model(r, 3)).toEqual({ text: END_OF_SCRIPT, finishReason: 'stop' });
  });
});

describe('the CLI entry', () => {
  it('starts the demo model, prints its /v1 URL, and runs the ask_user round trip', async () => {
    const file = fileURLToPath(new URL('./openai-server.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', file, '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      const client = new OpenAI({ baseURL: url, apiKey: 'dummy', maxRetries: 0 });
      const messages = ask('Pick a database for me.');
      const first = await client.chat.completions.stream({ model: MODEL, messages, tools: [ASK_TOOL] }).finalChatCompletion();
      const message = first.choices[0]!.message;
      const toolCall = message.tool_calls![0]!;
      if (toolCall.type !== 'function') throw new Error('expected a function call');
      expect(toolCall.function.name).toBe('ask_user');
      expect(JSON.parse(toolCall.function.arguments)).toEqual(DEMO_ASK);
      messages.push({ role: 'assistant', content: null, tool_calls: message.tool_calls }, { role: 'tool', tool_call_id: toolCall.id, content: SELECTED });
      const second = await client.chat.completions.create({ model: MODEL, messages, tools: [ASK_TOOL] });
      expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'Going with PostgreSQL.' } });
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('the Copilot runtime (@github/copilot-sdk, BYOK provider type "openai") against the fake server', () => {
  it("runs its built-in ask_user through onUserInputRequest and sends 'User selected: …' back to the model", async () => {
    const { server } = await start(demoChatModel, { apiKey: 'dummy' });
    const home = mkdtempSync(join(tmpdir(), 'askrelay-copilot-'));
    // A scratch HOME and a minimal environment: nothing of the developer's Copilot login or config leaks in.
    const client = new CopilotClient({ useLoggedInUser: false, env: { PATH: process.env.PATH, HOME: home }, workingDirectory: home, logLevel: 'error' });
    const asked: unknown[] = [];
    const permissions: PermissionRequest[] = [];
    const events: SessionEvent[] = [];
    try {
      const session = await client.createSession({
        model: MODEL,
        provider: { type: 'openai', baseUrl: server.url, apiKey: 'dummy' },
        workingDirectory: home,
        // The wire follows this flag: true → `stream:true` + `include_usage`; the default (false) → whole completions.
        streaming: true,
        onUserInputRequest: async (request) => {
          asked.push(request);
          return { answer: request.choices![0]!, wasFreeform: false };
        },
        onPermissionRequest: (request, invocation) => {
          permissions.push(request);
          return approveAll(request, invocation);
        },
      });
      const idle = new Promise<void>((resolve, reject) => {
        session.on((event) => {
          events.push(event);
          if (event.type === 'session.idle') resolve();
          if (event.type === 'session.error') reject(new Error(`session.error: ${JSON.stringify(event.data)}`));
        });
      });
      await session.send({ prompt: 'Pick a database for me.' });
      await idle;
      await session.disconnect();
    } finally {
      await client.stop();
      rmSync(home, { recursive: true, force: true });
    }

    expect(asked).toEqual([{ ...DEMO_ASK, allowFreeform: true }]);
    expect(permissions).toEqual([]);
    // Only chat completions, always streamed with usage, under the provider's baseUrl and key.
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/chat/completions', 'POST /v1/chat/completions']);
    for (const r of server.requests) {
      expect(r.headers.authorization).toBe('Bearer dummy');
      expect(r.body).toMatchObject({ model: MODEL, stream: true, stream_options: { include_usage: true } });
    }
    const [first, second] = server.requests.map((r) => r.body as ChatRequest);
    expect(first!.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(first!.messages[1]!.content).toMatch(/^<current_datetime>[^<]+<\/current_datetime>\n\nPick a database for me\.$/);
    expect(lastUserText(first!)).toBe('Pick a database for me.');
    expect(toolNames(first!)).toContain('ask_user');
    expect(toolSchema(first!, 'ask_user')).toMatchObject({
      type: 'object',
      properties: { question: { type: 'string' }, choices: { type: 'array', items: { type: 'string' } } },
      required: ['question'],
    });
    // The second request replays the assistant's tool call and carries the runtime's own result text.
    const callId = second!.messages.at(-2)!.tool_calls![0]!.id;
    expect(second!.messages.slice(-2)).toEqual([
      expect.objectContaining({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: callId, type: 'function', function: { name: 'ask_user', arguments: JSON.stringify(DEMO_ASK) } }],
      }),
      { role: 'tool', tool_call_id: callId, content: SELECTED },
    ]);
    expect(lastToolMessages(second!)).toEqual([{ tool_call_id: callId, content: SELECTED }]);
    expect(events.some((e) => e.type === 'assistant.message_delta')).toBe(true);
    const replies = events.filter((e) => e.type === 'assistant.message').map((e) => e.data.content);
    expect(replies.at(-1)).toBe('Going with PostgreSQL.');
  }, 30_000);
});
