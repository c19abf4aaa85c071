import Anthropic, { AnthropicError, APIError, AuthenticationError, BadRequestError, InternalServerError, NotFoundError, OverloadedError, RateLimitError } from '@anthropic-ai/sdk';
import { query, type PermissionResult } from '@anthropic-ai/claude-agent-sdk';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ANTHROPIC_VERSIONS,
  API_ERRORS,
  askingModel,
  DEMO_QUESTION,
  demoModel,
  END_OF_SCRIPT,
  JSON_CHUNK,
  lastToolResult,
  lastUserText,
  startAnthropicServer,
  stripSystemReminders,
  TEXT_CHUNK,
  TITLE_REPLY,
  toolNames,
  toolResults,
  type AnthropicServer,
  type AnthropicServerOptions,
  type MessagesRequest,
  type ScriptedModel,
} from './anthropic-server.js';

const MODEL = 'claude-sonnet-5';
const ASK = {
  questions: [
    {
      question: 'Which database?',
      header: 'DB',
      options: [
        { label: 'PostgreSQL', description: 'server' },
        { label: 'SQLite', description: 'embedded' },
      ],
      multiSelect: false,
    },
  ],
};
const ASK_TOOL: Anthropic.Tool = {
  name: 'AskUserQuestion',
  description: 'Ask the user.',
  input_schema: { type: 'object', properties: { questions: { type: 'array' } }, required: ['questions'] },
};
const ANSWERED = 'Your questions have been answered: "Which database?"="PostgreSQL". You can now continue with these answers in mind.';
/** What a raw fetch sends to pass the fake's header checks (as Claude Code sends them). */
const HEADERS = { 'content-type': 'application/json', 'x-api-key': 'dummy', 'anthropic-version': '2023-06-01' };
const REMINDER = '\n\n<system-reminder>\n<total_tokens>14999985 tokens left</total_tokens>\n</system-reminder>';

let server: AnthropicServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(
  model: ScriptedModel,
  options: Omit<AnthropicServerOptions, 'model'> = {},
  clientOptions: { maxRetries?: number } = {},
): Promise<{ server: AnthropicServer; client: Anthropic }> {
  server = await startAnthropicServer({ model, ...options });
  return { server, client: new Anthropic({ baseURL: server.url, apiKey: 'dummy', maxRetries: 0, ...clientOptions }) };
}

const ask = (text: string): Anthropic.MessageParam[] => [{ role: 'user', content: text }];

/** `type` or `type:delta-or-block-type`, for comparing event sequences. */
function label(event: Anthropic.RawMessageStreamEvent): string {
  if (event.type === 'content_block_start') return `${event.type}:${event.content_block.type}`;
  if (event.type === 'content_block_delta') return `${event.type}:${event.delta.type}`;
  return event.type;
}

function pieces(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''));
  return out;
}

describe('the fake Anthropic server, driven by @anthropic-ai/sdk', () => {
  it('streams a tool_use that finalMessage() parses, then answers the tool_result', async () => {
    const { server, client } = await start(
      askingModel([
        { text: 'Let me ask.', toolUse: { name: 'AskUserQuestion', input: ASK } },
        (request) => ({ text: `Thanks — ${lastToolResult(request)?.content}` }),
      ]),
    );
    const messages = ask('Pick a database for me.');
    const stream = client.messages.stream({ model: MODEL, max_tokens: 1024, tools: [ASK_TOOL], messages });
    const textDeltas: string[] = [];
    const jsonFragments: string[] = [];
    stream.on('text', (delta) => textDeltas.push(delta));
    stream.on('inputJson', (fragment) => jsonFragments.push(fragment));
    const first = await stream.finalMessage();

    expect(first).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: MODEL,
      stop_reason: 'tool_use',
      stop_sequence: null,
      content: [
        { type: 'text', text: 'Let me ask.' },
        { type: 'tool_use', name: 'AskUserQuestion', input: ASK },
      ],
      usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    expect(first.id).toMatch(/^msg_01[0-9A-Za-z]{22}$/);
    expect(first.usage.input_tokens).toBeGreaterThan(0);
    expect(first.usage.output_tokens).toBeGreaterThan(0);
    const toolUse = first.content[1] as Anthropic.ToolUseBlock;
    expect(toolUse.id).toMatch(/^toolu_01[0-9A-Za-z]{22}$/);
    expect(textDeltas.join('')).toBe('Let me ask.');
    expect(jsonFragments.length).toBeGreaterThan(2);
    expect(jsonFragments.join('')).toBe(JSON.stringify(ASK));

    messages.push(
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: ANSWERED }] },
    );
    const second = await client.messages.stream({ model: MODEL, max_tokens: 1024, tools: [ASK_TOOL], messages }).finalMessage();
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content).toEqual([{ type: 'text', text: `Thanks — ${ANSWERED}` }]);

    expect(server.requests.map((r) => `${r.method} ${r.path}${r.query}`)).toEqual(['POST /v1/messages', 'POST /v1/messages']);
    const [one, two] = server.requests;
    // SDK 1.14 sends the key as a bearer token (Claude Code sends x-api-key) and its own API version.
    expect(one!.headers.authorization).toBe('Bearer dummy');
    expect(one!.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(one!.body).toMatchObject({ model: MODEL, max_tokens: 1024, stream: true, tools: [ASK_TOOL], messages: [{ role: 'user', content: 'Pick a database for me.' }] });
    expect(two!.body.messages).toHaveLength(3);
    expect(two!.body.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me ask.' },
        { type: 'tool_use', id: toolUse.id, name: 'AskUserQuestion', input: ASK },
      ],
    });
    expect(two!.body.messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: ANSWERED }] });
  });

  it('sends the raw events in the exact order and shape Anthropic does', async () => {
    const text = 'Sure — let me ask you one thing first.';
    const { client } = await start(askingModel([{ text, toolUse: { name: 'AskUserQuestion', input: ASK, id: 'toolu_fixed' } }]));
    const raw = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('hi'), stream: true });
    const events: Anthropic.RawMessageStreamEvent[] = [];
    for await (const event of raw) events.push(event);

    const textParts = pieces(text, TEXT_CHUNK);
    const jsonParts = pieces(JSON.stringify(ASK), JSON_CHUNK);
    expect(textParts.length).toBeGreaterThan(1);
    expect(jsonParts.length).toBeGreaterThan(1);
    expect(events.map(label)).toEqual([
      'message_start',
      'content_block_start:text',
      ...textParts.map(() => 'content_block_delta:text_delta'),
      'content_block_stop',
      'content_block_start:tool_use',
      ...jsonParts.map(() => 'content_block_delta:input_json_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);

    const start_ = events[0] as Anthropic.RawMessageStartEvent;
    expect(start_.message).toEqual({
      id: expect.stringMatching(/^msg_/),
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: expect.any(Number), output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    expect(events[1]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    expect(events.slice(2, 2 + textParts.length)).toEqual(
      textParts.map((part) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: part } })),
    );
    const toolStart = 3 + textParts.length;
    expect(events[toolStart]).toEqual({
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'toolu_fixed', name: 'AskUserQuestion', input: {} },
    });
    expect(events.slice(toolStart + 1, toolStart + 1 + jsonParts.length)).toEqual(
      jsonParts.map((partial_json) => ({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json } })),
    );
    expect(events.at(-3)).toEqual({ type: 'content_block_stop', index: 1 });
    expect(events.at(-2)).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: expect.any(Number) },
    });
    expect(events.at(-1)).toEqual({ type: 'message_stop' });
  });

  it('frames each event as "event: <type>\\ndata: <json>\\n\\n" with a request-id header (Claude Code\'s ?beta=true too)', async () => {
    const { server } = await start(askingModel(['Hello.']));
    const res = await fetch(`${server.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ model: MODEL, max_tokens: 8, stream: true, messages: ask('hi') }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    const wire = await res.text();
    expect(wire.endsWith('\n\n')).toBe(true);
    const frames = wire.slice(0, -2).split('\n\n');
    expect(frames.map((frame) => frame.match(/^event: (\w+)\ndata: (\{.*\})$/)?.[1])).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const frame of frames) {
      const [, type, data] = frame.match(/^event: (\w+)\ndata: (.*)$/)!;
      expect(JSON.parse(data!).type).toBe(type);
    }
    expect(frames[1]).toBe('event: ping\ndata: {"type":"ping"}');
    expect(server.requests[0]).toMatchObject({ method: 'POST', path: '/v1/messages', query: '?beta=true' });
  });

  it("serves the SDK's beta client (same path, betas in the anthropic-beta header)", async () => {
    const { server, client } = await start(askingModel([{ toolUse: { name: 'AskUserQuestion', input: ASK } }]));
    const message = await client.beta.messages
      .stream({ model: MODEL, max_tokens: 64, messages: ask('hi'), betas: ['interleaved-thinking-2025-05-14'] })
      .finalMessage();
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^toolu_/), name: 'AskUserQuestion', input: ASK }]);
    expect(server.requests[0]).toMatchObject({ path: '/v1/messages', query: '' });
    expect(server.requests[0]!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
  });

  it('answers a request without stream with the whole message JSON', async () => {
    const { client } = await start(askingModel([{ text: 'Cut short', stopReason: 'max_tokens' }]));
    const message = await client.messages.create({ model: MODEL, max_tokens: 4, messages: ask('hi') });
    expect(message).toEqual({
      id: expect.stringMatching(/^msg_01/),
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [{ type: 'text', text: 'Cut short' }],
      stop_reason: 'max_tokens',
      stop_sequence: null,
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number), cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
  });

  it('counts tokens, answers HEAD with 200 and unknown paths with a 404 not_found_error', async () => {
    const { server, client } = await start(askingModel([]));
    const counted = await client.messages.countTokens({ model: MODEL, messages: ask('How many tokens is this?') });
    expect(counted).toEqual({ input_tokens: expect.any(Number) });
    expect(counted.input_tokens).toBeGreaterThan(0);

    expect((await fetch(`${server.url}/api/hello`, { method: 'HEAD' })).status).toBe(200);

    const error = await client.models.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).status).toBe(404);
    expect((error as NotFoundError).error).toEqual({ type: 'error', error: { type: 'not_found_error', message: 'Not found: GET /v1/models' }, request_id: expect.stringMatching(/^req_/) });

    const res = await fetch(`${server.url}/v1/nothing-here`, { method: 'POST', headers: HEADERS, body: '{}' });
    expect(res.status).toBe(404);
    const body = (await res.json()) as { request_id: string };
    // The body names the request the way the `request-id` header does.
    expect(body).toEqual({ type: 'error', error: { type: 'not_found_error', message: 'Not found: POST /v1/nothing-here' }, request_id: res.headers.get('request-id') });
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /v1/messages/count_tokens',
      'HEAD /api/hello',
      'GET /v1/models',
      'POST /v1/nothing-here',
    ]);
  });

  it("answers Claude Code's title request (output_config json_schema) itself: the model never sees it", async () => {
    const seen: number[] = [];
    const { server, client } = await start((_request, index) => {
      seen.push(index);
      return { text: 'model reply' };
    });
    const title = await client.messages.create({
      model: MODEL,
      max_tokens: 64,
      messages: ask('Name this session'),
      output_config: { format: { type: 'json_schema', schema: { type: 'object', properties: { title: { type: 'string' } } } } },
    } as Anthropic.MessageCreateParamsNonStreaming);
    expect(title.content).toEqual([{ type: 'text', text: TITLE_REPLY }]);
    expect(JSON.parse(TITLE_REPLY)).toEqual({ title: expect.any(String) });

    const reply = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('hi') });
    expect(reply.content).toEqual([{ type: 'text', text: 'model reply' }]);
    expect(seen).toEqual([0]);
    expect(server.requests).toHaveLength(2);
  });

  describe('tool input streamed as invalid JSON (rawJson)', () => {
    const BROKEN = '{"questions": [ {"question": "Which database?", oops}';

    it('makes MessageStream fail: finalMessage() rejects with an AnthropicError naming the parse error', async () => {
      const { client } = await start(askingModel([{ text: 'Asking', toolUse: { name: 'AskUserQuestion', input: {}, rawJson: BROKEN } }]));
      const stream = client.messages.stream({ model: MODEL, max_tokens: 64, messages: ask('hi') });
      const errors: unknown[] = [];
      stream.on('error', (e) => errors.push(e));
      const error = await stream.finalMessage().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AnthropicError);
      expect(error).not.toBeInstanceOf(APIError);
      expect((error as Error).message).toMatch(/^Expected double-quoted property name in JSON at position \d+/);
      expect(errors).toEqual([error]);
    });

    it("makes the beta MessageStream fail with 'Unable to parse tool parameter JSON from model'", async () => {
      const { client } = await start(askingModel([{ toolUse: { name: 'AskUserQuestion', input: {}, rawJson: BROKEN } }]));
      const error = await client.beta.messages
        .stream({ model: MODEL, max_tokens: 64, messages: ask('hi') })
        .finalMessage()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AnthropicError);
      expect((error as Error).message).toContain('Unable to parse tool parameter JSON from model.');
      expect((error as Error).message).toContain(`JSON: ${BROKEN}`);
    });

    it('reaches a raw create({stream:true}) reader verbatim, in several fragments', async () => {
      const { client } = await start(askingModel([{ toolUse: { name: 'AskUserQuestion', input: {}, rawJson: BROKEN } }]));
      const raw = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('hi'), stream: true });
      const fragments: string[] = [];
      for await (const event of raw) {
        if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta') fragments.push(event.delta.partial_json);
      }
      expect(fragments).toEqual(pieces(BROKEN, JSON_CHUNK));
      expect(fragments.length).toBeGreaterThan(1);
    });

    it('is silently partial-parsed by MessageStream when it is merely truncated (no error)', async () => {
      const { client } = await start(
        askingModel([{ toolUse: { name: 'AskUserQuestion', input: {}, rawJson: '{"questions": [{"question": "Which database?", "header": "D' } }]),
      );
      const message = await client.messages.stream({ model: MODEL, max_tokens: 64, messages: ask('hi') }).finalMessage();
      expect(message.content).toEqual([
        { type: 'tool_use', id: expect.any(String), name: 'AskUserQuestion', input: { questions: [{ question: 'Which database?' }] } },
      ]);
    });

    it('falls back to `input` in a non-streaming reply (a whole message can only carry an object)', async () => {
      const { client } = await start(askingModel([{ toolUse: { name: 'AskUserQuestion', input: { fallback: true }, rawJson: BROKEN } }]));
      const message = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('hi') });
      expect(message.content).toEqual([{ type: 'tool_use', id: expect.any(String), name: 'AskUserQuestion', input: { fallback: true } }]);
    });
  });

  it('turns a throwing model into a 500 api_error and a scripted error into that HTTP error', async () => {
    const { client } = await start(
      askingModel([
        () => {
          throw new Error('boom');
        },
        { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
      ]),
    );
    const failed = await client.messages.create({ model: MODEL, max_tokens: 8, messages: ask('hi') }).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(InternalServerError);
    expect((failed as APIError).status).toBe(500);
    expect((failed as APIError).error).toEqual({ type: 'error', error: { type: 'api_error', message: 'scripted model failed: boom' }, request_id: expect.stringMatching(/^req_/) });

    const overloaded = await client.messages.create({ model: MODEL, max_tokens: 8, messages: ask('hi') }).catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(APIError);
    expect((overloaded as APIError).status).toBe(529);
    expect((overloaded as APIError).error).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' }, request_id: expect.stringMatching(/^req_/) });
  });

  it('refuses a body that is not JSON or has no messages with a 400 invalid_request_error', async () => {
    const { server } = await start(askingModel([]));
    const notJson = await fetch(`${server.url}/v1/messages`, { method: 'POST', headers: HEADERS, body: '{oops' });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: 'The request body is not valid JSON.' }, request_id: expect.stringMatching(/^req_/) });
    const noMessages = await fetch(`${server.url}/v1/messages`, { method: 'POST', headers: HEADERS, body: JSON.stringify({ model: MODEL }) });
    expect(noMessages.status).toBe(400);
    expect(((await noMessages.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    expect(server.requests.map((r) => r.body)).toEqual(['{oops', { model: MODEL }]);
  });
});

describe('failures and headers, as the API sends them (docs: streaming, errors, versioning)', () => {
  /** Reads a streamed body chunk by chunk: the SSE frames that arrived, and how reading ended. */
  async function readFrames(res: Response): Promise<{ frames: string[]; ended: 'complete' | string }> {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let ended: string;
    for (;;) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          ended = 'complete';
          break;
        }
        text += decoder.decode(value, { stream: true });
      } catch (error) {
        ended = `${(error as Error).message} (${((error as Error).cause as Error | undefined)?.message})`;
        break;
      }
    }
    return { frames: text.split('\n\n').filter(Boolean), ended };
  }

  const post = (server: AnthropicServer, headers: Record<string, string> = HEADERS, body: unknown = { model: MODEL, max_tokens: 64, stream: true, messages: ask('hi') }) =>
    fetch(`${server.url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify(body) });

  const typeOf = (frame: string) => /^event: (\w+)\n/.exec(frame)?.[1];

  it('sends ping events, which the SDK ignores, in its raw stream too', async () => {
    const { server, client } = await start(askingModel([{ text: 'Pinged.', pings: 3 }, { text: 'Pinged.', pings: 3 }]));
    const { frames, ended } = await readFrames(await post(server));
    expect(ended).toBe('complete');
    expect(frames.map(typeOf)).toEqual(['message_start', 'ping', 'ping', 'ping', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(frames.filter((f) => typeOf(f) === 'ping')).toEqual(Array(3).fill('event: ping\ndata: {"type":"ping"}'));

    const raw = await client.messages.create({ model: MODEL, max_tokens: 64, messages: ask('hi'), stream: true });
    const events: string[] = [];
    for await (const event of raw) events.push(event.type);
    expect(events).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
  });

  it('ends a stream with an `error` event after the events it sent; MessageStream rejects with that error and no status', async () => {
    const broken = { text: 'A reply that is cut short.', streamError: { afterEvents: 4, type: 'overloaded_error', message: 'Overloaded' } };
    const { server, client } = await start(askingModel([broken, broken]));
    const res = await post(server);
    expect(res.status).toBe(200);
    const { frames, ended } = await readFrames(res);
    expect(ended).toBe('complete');
    expect(frames.map(typeOf)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'error']);
    expect(frames.at(-1)).toBe('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}');

    const stream = client.messages.stream({ model: MODEL, max_tokens: 64, messages: ask('hi') });
    const seen: string[] = [];
    stream.on('streamEvent', (event) => seen.push(event.type));
    const error = await stream.finalMessage().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBeUndefined();
    expect((error as APIError).error).toEqual({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    expect(seen).toEqual(['message_start', 'content_block_start', 'content_block_delta']);
  });

  it('cuts a stream after the events it sent (no message_stop, no end of body); the SDK fails with "terminated"', async () => {
    const cut = { text: 'A reply whose connection drops.', cutAfterEvents: 3 };
    const { server, client } = await start(askingModel([cut, cut]));
    const { frames, ended } = await readFrames(await post(server));
    expect(frames.map(typeOf)).toEqual(['message_start', 'ping', 'content_block_start']);
    expect(ended).toBe('terminated (other side closed)');

    const stream = client.messages.stream({ model: MODEL, max_tokens: 64, messages: ask('hi') });
    const seen: string[] = [];
    stream.on('streamEvent', (event) => seen.push(event.type));
    const error = await stream.finalMessage().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AnthropicError);
    expect(error).not.toBeInstanceOf(APIError); // the SDK does not retry it: the reply had begun
    expect((error as Error).message).toBe('terminated');
    expect(seen).toEqual(['message_start', 'content_block_start']);
    expect(server.requests).toHaveLength(2);
  });

  it('answers 429 with retry-after, 500 and 529 in Anthropic\'s error shape; the SDK retries each', async () => {
    const { server, client } = await start(askingModel([API_ERRORS.rateLimit(7), API_ERRORS.internal(), API_ERRORS.overloaded()]));
    const limited = await client.messages.create({ model: MODEL, max_tokens: 8, messages: ask('hi') }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(RateLimitError);
    expect((limited as APIError).headers?.get('retry-after')).toBe('7');
    expect((limited as APIError).error).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit.' },
      request_id: (limited as APIError).headers?.get('request-id'),
    });
    const internal = await client.messages.create({ model: MODEL, max_tokens: 8, messages: ask('hi') }).catch((e: unknown) => e);
    expect(internal).toBeInstanceOf(InternalServerError);
    expect((internal as APIError).status).toBe(500);
    expect((internal as APIError).error).toMatchObject({ type: 'error', error: { type: 'api_error', message: 'Internal server error' } });
    const overloaded = await client.messages.create({ model: MODEL, max_tokens: 8, messages: ask('hi') }).catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(OverloadedError);
    expect((overloaded as APIError).error).toMatchObject({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });

    // retry-after 0 leaves the wait to the SDK's own back-off (under half a second at first).
    const retried = await start(askingModel([API_ERRORS.rateLimit(0), 'second time']), {}, { maxRetries: 1 });
    const message = await retried.client.messages.create({ model: MODEL, max_tokens: 8, messages: ask('hi') });
    expect(message.content).toEqual([{ type: 'text', text: 'second time' }]);
    expect(retried.server.requests.map((r) => r.headers['x-stainless-retry-count'])).toEqual(['0', '1']);
  });

  describe('x-api-key and anthropic-version', () => {
    const refusal = (status: number, type: string, message: string) => ({ status, body: { type: 'error', error: { type, message }, request_id: expect.stringMatching(/^req_/) } });
    const answer = async (res: Response) => ({ status: res.status, body: await res.json() });
    const { 'x-api-key': _key, ...noKey } = HEADERS;
    const { 'anthropic-version': _version, ...noVersion } = HEADERS;

    it('refuses a request without a key (401), with another key (401), or without a known version (400); the model never sees it', async () => {
      const seen: number[] = [];
      const { server } = await start((_request, index) => {
        seen.push(index);
        return { text: 'ok' };
      }, { apiKey: 'sk-right' });
      const right = { ...HEADERS, 'x-api-key': 'sk-right' };
      expect(await answer(await post(server, noKey, { model: MODEL, max_tokens: 8, messages: ask('hi') }))).toEqual(refusal(401, 'authentication_error', 'x-api-key header is required'));
      expect(await answer(await post(server, { ...HEADERS, 'x-api-key': 'sk-wrong' }))).toEqual(refusal(401, 'authentication_error', 'invalid x-api-key'));
      expect(await answer(await post(server, { ...noKey, authorization: 'Bearer sk-wrong' }))).toEqual(refusal(401, 'authentication_error', 'invalid x-api-key'));
      expect(await answer(await post(server, { ...noVersion, 'x-api-key': 'sk-right' }))).toEqual(refusal(400, 'invalid_request_error', 'anthropic-version: header is required'));
      expect(await answer(await post(server, { ...right, 'anthropic-version': '2024-10-22' }))).toEqual(
        refusal(400, 'invalid_request_error', 'anthropic-version: "2024-10-22" is not a valid version'),
      );
      expect(seen).toEqual([]);
      for (const version of ANTHROPIC_VERSIONS) expect((await post(server, { ...right, 'anthropic-version': version })).status).toBe(200);
      expect((await post(server, { ...noKey, authorization: 'Bearer sk-right' })).status).toBe(200);
      expect(seen).toEqual([0, 1, 2, 3]);
    });

    it('takes a bearer token only when `bearer` is not false; @anthropic-ai/sdk passes the checks as it is', async () => {
      const strict = await start(askingModel(['never']), { bearer: false });
      expect(await answer(await post(strict.server, { ...noKey, authorization: 'Bearer dummy' }))).toEqual(refusal(401, 'authentication_error', 'x-api-key header is required'));
      const refused = await strict.client.messages.create({ model: MODEL, max_tokens: 8, messages: ask('hi') }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(AuthenticationError);
      await server!.close();

      const { client } = await start(askingModel(['accepted', 'with x-api-key']), { apiKey: 'dummy' });
      expect((await client.messages.create({ model: MODEL, max_tokens: 8, messages: ask('hi') })).content).toEqual([{ type: 'text', text: 'accepted' }]);
      const wrong = new Anthropic({ baseURL: server!.url, apiKey: 'sk-other', maxRetries: 0 });
      expect(await wrong.messages.create({ model: MODEL, max_tokens: 8, messages: ask('hi') }).catch((e: unknown) => e)).toBeInstanceOf(AuthenticationError);
      // How the messages engine calls it: the key as x-api-key, no Authorization header.
      const engineLike = new Anthropic({ baseURL: server!.url, apiKey: 'dummy', maxRetries: 0, defaultHeaders: { 'x-api-key': 'dummy', authorization: null } });
      expect((await engineLike.messages.create({ model: MODEL, max_tokens: 8, messages: ask('hi') })).content).toEqual([{ type: 'text', text: 'with x-api-key' }]);
      const unversioned = new Anthropic({ baseURL: server!.url, apiKey: 'dummy', maxRetries: 0, defaultHeaders: { 'anthropic-version': null } });
      const noVersionError = await unversioned.messages.create({ model: MODEL, max_tokens: 8, messages: ask('hi') }).catch((e: unknown) => e);
      expect(noVersionError).toBeInstanceOf(BadRequestError);
      expect((noVersionError as APIError).error).toMatchObject({ error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' } });
    });
  });
});

describe('scripted model helpers', () => {
  // The helpers take the SDK's own params as well as what the server hands a model.
  const request = (messages: Anthropic.MessageParam[], extra: Partial<Anthropic.MessageCreateParams> = {}): Anthropic.MessageCreateParams => ({
    model: MODEL,
    max_tokens: 64,
    messages,
    ...extra,
  });

  it("lastToolResult reads the last user message's tool_result and strips Claude Code's system-reminder suffix", () => {
    const r = request([
      { role: 'user', content: 'Pick' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'AskUserQuestion', input: ASK }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: ANSWERED + REMINDER + REMINDER, cache_control: { type: 'ephemeral' } }] },
    ]);
    expect(lastToolResult(r)).toEqual({ tool_use_id: 'toolu_1', content: ANSWERED });
  });

  it('lastToolResult joins array content, keeps is_error, and ignores tool results of earlier turns', () => {
    const earlier: Anthropic.MessageParam = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_old', content: 'old' }] };
    expect(
      lastToolResult(
        request([
          earlier,
          { role: 'assistant', content: 'ok' },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_2', is_error: true, content: [{ type: 'text', text: 'first' }, { type: 'text', text: 'second' }] },
              { type: 'text', text: '<system-reminder>\nnoise\n</system-reminder>' },
            ],
          },
        ]),
      ),
    ).toEqual({ tool_use_id: 'toolu_2', content: 'first\n\nsecond', is_error: true });
    expect(lastToolResult(request([earlier, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'next' }]))).toBeUndefined();
    expect(toolResults(request([earlier]))).toEqual([{ tool_use_id: 'toolu_old', content: 'old' }]);
  });

  it("lastUserText drops Claude Code's system-reminder blocks; toolNames lists the offered tools", () => {
    const r = request(
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>\n# Environment\n</system-reminder>' },
            { type: 'text', text: '<system-reminder>\nToday is a day.\n</system-reminder>' },
            { type: 'text', text: 'Pick a database for me.', cache_control: { type: 'ephemeral' } },
          ],
        },
      ],
      { tools: [ASK_TOOL, { name: 'Bash', input_schema: { type: 'object' } }, { type: 'web_search_20250305', name: 'web_search' }] },
    );
    expect(lastUserText(r)).toBe('Pick a database for me.');
    expect(lastUserText(request([{ role: 'user', content: 'plain' }]))).toBe('plain');
    expect(lastUserText(request([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'r' }] }]))).toBe('');
    expect(toolNames(r)).toEqual(['AskUserQuestion', 'Bash', 'web_search']);
    expect(toolNames({ tools: [{ type: 'bash_20250124' }] })).toEqual(['bash_20250124']);
    expect(toolNames(request([]))).toEqual([]);
    expect(stripSystemReminders('a\n<system-reminder>x</system-reminder>')).toBe('a');
  });

  it('askingModel plays its steps in order (replies, strings, functions), then "(end of script)"', async () => {
    const model = askingModel([
      { toolUse: { name: 'AskUserQuestion', input: ASK } },
      (r, index) => `step 2 saw "${lastUserText(r)}" at ${index}`,
      async () => ({ text: 'Out of room', stopReason: 'max_tokens' }),
    ]);
    const r: MessagesRequest = { model: MODEL, messages: [{ role: 'user', content: 'go' }] };
    expect(await model(r, 0)).toEqual({ toolUse: { name: 'AskUserQuestion', input: ASK } });
    expect(await model(r, 1)).toEqual({ text: 'step 2 saw "go" at 1' });
    expect(await model(r, 2)).toEqual({ text: 'Out of room', stopReason: 'max_tokens' });
    expect(await model(r, 3)).toEqual({ text: END_OF_SCRIPT, stopReason: 'end_turn' });
    expect(await model(r, 4)).toEqual({ text: '(end of script)', stopReason: 'end_turn' });
  });
});

describe('the CLI entry', () => {
  it('starts the demo model, prints its URL, and runs the ask round trip', async () => {
    const file = fileURLToPath(new URL('./anthropic-server.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', file, '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const client = new Anthropic({ baseURL: url, apiKey: 'dummy', maxRetries: 0 });
      const messages = ask('Pick a database for me.');
      const first = await client.messages.stream({ model: MODEL, max_tokens: 1024, tools: [ASK_TOOL], messages }).finalMessage();
      const toolUse = first.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
      expect(toolUse).toMatchObject({ name: 'AskUserQuestion', input: DEMO_QUESTION });
      expect(DEMO_QUESTION.questions[0]).toMatchObject({ question: 'Which database?', header: 'DB' });
      messages.push(
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: ANSWERED }] },
      );
      const second = await client.messages.stream({ model: MODEL, max_tokens: 1024, tools: [ASK_TOOL], messages }).finalMessage();
      expect(second.stop_reason).toBe('end_turn');
      expect(second.content).toEqual([{ type: 'text', text: 'Going with PostgreSQL.' }]);
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('Claude Code (claude-agent-sdk) against the fake server', () => {
  async function runClaudeCode(
    model: ScriptedModel,
    canUseTool: (name: string, input: Record<string, unknown>, toolUseID: string) => PermissionResult,
  ) {
    // Only the key it was given, and only as x-api-key: Claude Code must pass the API's own checks.
    const { server } = await start(model, { apiKey: 'dummy', bearer: false });
    const home = mkdtempSync(join(tmpdir(), 'askrelay-cc-'));
    const calls: Array<{ name: string; input: Record<string, unknown>; toolUseID: string }> = [];
    let result: string | undefined;
    try {
      for await (const message of query({
        prompt: 'Pick a database for me.',
        options: {
          model: MODEL,
          cwd: home,
          permissionMode: 'default',
          settingSources: [],
          maxTurns: 3,
          env: {
            PATH: process.env.PATH,
            HOME: home,
            ANTHROPIC_BASE_URL: server.url,
            ANTHROPIC_API_KEY: 'dummy',
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
            DISABLE_TELEMETRY: '1',
            DISABLE_AUTOUPDATER: '1',
            CLAUDE_CODE_TOTAL_TOKENS_REMINDER: 'off',
          },
          canUseTool: async (name, input, { toolUseID }) => {
            calls.push({ name, input, toolUseID });
            return canUseTool(name, input, toolUseID);
          },
        },
      })) {
        if (message.type === 'result' && message.subtype === 'success') result = message.result;
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
    return { server, calls, result };
  }

  it('runs an AskUserQuestion round trip with the demo model', async () => {
    const { server, calls, result } = await runClaudeCode(demoModel, (_name, input) => ({
      behavior: 'allow',
      updatedInput: { ...input, answers: { 'Which database?': 'PostgreSQL' } },
    }));
    expect(calls).toEqual([{ name: 'AskUserQuestion', input: DEMO_QUESTION, toolUseID: expect.stringMatching(/^toolu_01/) }]);
    expect(server.requests.map((r) => `${r.method} ${r.path}${r.query}`)).toEqual([
      'POST /v1/messages?beta=true',
      'POST /v1/messages?beta=true',
    ]);
    expect(lastToolResult(server.requests[1]!.body)).toEqual({ tool_use_id: calls[0]!.toolUseID, content: ANSWERED });
    expect(result).toBe('Going with PostgreSQL.');
    for (const request of server.requests) {
      expect(request.headers).toMatchObject({ 'x-api-key': 'dummy', 'anthropic-version': '2023-06-01' });
      expect(request.headers.authorization).toBeUndefined();
    }
  });

  it('answers tool input that is not JSON with an InputValidationError tool_result, never calling canUseTool', async () => {
    const broken = '{"questions": [ {"question": "Which database?", oops}';
    const { server, calls, result } = await runClaudeCode(
      askingModel([{ toolUse: { name: 'AskUserQuestion', input: {}, rawJson: broken } }, (r) => JSON.stringify(lastToolResult(r))]),
      () => ({ behavior: 'deny', message: 'unexpected' }),
    );
    expect(calls).toEqual([]);
    const toolResult = lastToolResult(server.requests[1]!.body);
    expect(toolResult).toEqual({
      tool_use_id: expect.stringMatching(/^toolu_01/),
      is_error: true,
      content:
        '<tool_use_error>InputValidationError: AskUserQuestion was called with input that could not be parsed as JSON.\n' +
        `You sent (first ${broken.length} of ${broken.length} bytes): ${broken}\n` +
        'Common causes: unescaped backslashes in file paths (use / or \\\\), unescaped control characters, or truncated output. Retry with valid JSON.</tool_use_error>',
    });
    expect(result).toBe(JSON.stringify(toolResult));
  });
});
