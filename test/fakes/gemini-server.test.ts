// The fake Gemini API, driven by the real @google/genai client. That client is not a package
// of its own here: Gemini CLI bundles it (SDK 1.30, sent as `x-goog-api-client:
// google-genai-sdk/1.30.0`), so it is taken from the CLI's bundle through the CLI's own
// factory, createContentGenerator, whose innermost generator is the SDK's `Models` object:
// what the CLI itself calls. Its wire format and SSE reader are the ones under test here.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  END_OF_SCRIPT,
  functionDeclaration,
  functionNames,
  functionResponses,
  GEMINI_ERRORS,
  lastFunctionResponse,
  lastUserText,
  scriptedGemini,
  startGeminiServer,
  TEXT_CHUNK,
  type GeminiServer,
  type GeminiServerOptions,
  type GenerateContentRequest,
  type ScriptedGeminiModel,
} from './gemini-server.js';

const MODEL = 'gemini-2.5-flash';
const KEY = 'AIza-fake-key';
const BUNDLE = fileURLToPath(new URL('../../node_modules/@google/gemini-cli/bundle/', import.meta.url));

/** The slice of @google/genai's `Models` these tests call (the SDK's types are not shipped). */
interface GenAIModels {
  generateContent(params: Record<string, unknown>): Promise<GenAIResponse>;
  generateContentStream(params: Record<string, unknown>): Promise<AsyncIterable<GenAIResponse>>;
  countTokens(params: Record<string, unknown>): Promise<{ totalTokens?: number }>;
  get(params: { model: string }): Promise<Record<string, unknown>>;
  list(params?: Record<string, unknown>): Promise<AsyncIterable<Record<string, unknown>>>;
}
interface GenAIResponse {
  text?: string;
  functionCalls?: Array<{ name?: string; args?: Record<string, unknown>; id?: string }>;
  candidates?: Array<{ content?: { parts?: Array<Record<string, unknown>>; role?: string }; finishReason?: string; index?: number; finishMessage?: string }>;
  usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number; totalTokenCount?: number };
  modelVersion?: string;
  responseId?: string;
}
type CreateContentGenerator = (config: Record<string, unknown>, gcConfig: Record<string, unknown>, sessionId?: string) => Promise<{ getWrapped(): { getWrapped(): GenAIModels } }>;

let createContentGenerator: CreateContentGenerator;
beforeAll(async () => {
  // The bundle's `core-<hash>.js` re-exports @google/gemini-cli-core; its hash changes with the CLI version.
  const core = readdirSync(BUNDLE).filter((name) => /^core-[A-Z0-9]+\.js$/.test(name)).sort()[0];
  if (!core) throw new Error(`no core-*.js in ${BUNDLE}: has the Gemini CLI bundle changed?`);
  ({ createContentGenerator } = (await import(`${BUNDLE}${core}`)) as { createContentGenerator: CreateContentGenerator });
}, 30_000);

let server: GeminiServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A fake server playing `model` and the SDK's Models client pointed at it (the CLI's headers included). */
async function start(model: ScriptedGeminiModel, options: Partial<GeminiServerOptions> = {}, apiKey = KEY): Promise<{ server: GeminiServer; models: GenAIModels }> {
  server = await startGeminiServer({ model, ...options });
  // Just what createContentGenerator asks of the CLI's Config for an API-key client.
  const gcConfig = { getModel: () => MODEL, getClientName: () => undefined, getUsageStatisticsEnabled: () => false };
  const generator = await createContentGenerator({ authType: 'gemini-api-key', apiKey, baseUrl: server.url }, gcConfig, 'test-session');
  return { server, models: generator.getWrapped().getWrapped() };
}

const user = (text: string) => [{ role: 'user', parts: [{ text }] }];

function pieces(text: string, size: number): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''));
  return out;
}

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of stream) out.push(item);
  return out;
}

/** The error an SDK call rejects with: @google/genai's ApiError carries the status and the body as JSON text. */
async function apiError(call: Promise<unknown>): Promise<{ name: string; status: number; body: { error: { code: number; message: string; status: string; details?: Array<Record<string, unknown>> } } }> {
  const error = (await call.then(
    () => undefined,
    (e: unknown) => e,
  )) as { name: string; status: number; message: string } | undefined;
  if (!error) throw new Error('the call did not fail');
  return { name: error.name, status: error.status, body: JSON.parse(error.message) };
}

describe('the fake Gemini API, driven by @google/genai (as bundled in Gemini CLI)', () => {
  it('answers generateContent with one GenerateContentResponse', async () => {
    const { server, models } = await start(scriptedGemini(['Hello there, this is a whole reply.']));
    const response = await models.generateContent({ model: MODEL, contents: user('Say hello.') });

    expect(response.text).toBe('Hello there, this is a whole reply.');
    expect(response.candidates).toEqual([{ content: { parts: [{ text: 'Hello there, this is a whole reply.' }], role: 'model' }, finishReason: 'STOP', index: 0 }]);
    expect(response.modelVersion).toBe(MODEL);
    expect(response.responseId).toMatch(/^[0-9A-Za-z]{23}$/);
    const usage = response.usageMetadata!;
    expect(usage.promptTokenCount).toBeGreaterThan(0);
    expect(usage.totalTokenCount).toBe(usage.promptTokenCount! + usage.candidatesTokenCount!);

    const [request] = server.requests;
    expect(`${request!.method} ${request!.path}${request!.query}`).toBe(`POST /v1beta/models/${MODEL}:generateContent`);
    expect(request!.headers['x-goog-api-key']).toBe(KEY);
    expect(request!.headers['x-goog-api-client']).toMatch(/^google-genai-sdk\/\d+\.\d+\.\d+ gl-node\//);
    expect(request!.body).toEqual({ contents: user('Say hello.') });
  });

  it('streams text in pieces over SSE, the last chunk with finishReason; every chunk has usage and one responseId', async () => {
    const text = 'A streamed reply that takes several pieces to arrive — with a non-ASCII dash.';
    const { server, models } = await start(scriptedGemini([text]));
    const chunks = await collect(await models.generateContentStream({ model: MODEL, contents: user('Stream it.') }));

    expect(chunks.map((c) => c.text)).toEqual(pieces(text, TEXT_CHUNK));
    expect(chunks.map((c) => c.candidates?.[0]?.finishReason)).toEqual([...chunks.slice(1).map(() => undefined), 'STOP']);
    expect(new Set(chunks.map((c) => c.responseId)).size).toBe(1);
    for (const chunk of chunks) expect(chunk).toMatchObject({ modelVersion: MODEL, usageMetadata: { promptTokenCount: expect.any(Number), totalTokenCount: expect.any(Number) } });
    // usageMetadata is cumulative, as the API's is: the candidates' count never goes down
    const counts = chunks.map((c) => c.usageMetadata!.candidatesTokenCount!);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(`${server.requests[0]!.path}${server.requests[0]!.query}`).toBe(`/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
  });

  it('frames the stream as `data: <json>` events and, without alt=sse, as a streamed JSON array', async () => {
    const { server } = await start(scriptedGemini(['Twenty-four characters.', 'Twenty-four characters.']));
    const post = (query: string) =>
      fetch(`${server.url}/v1beta/models/${MODEL}:streamGenerateContent${query}`, { method: 'POST', headers: { 'x-goog-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify({ contents: user('hi') }) });

    const sse = await post('?alt=sse');
    expect(sse.headers.get('content-type')).toBe('text/event-stream');
    const events = (await sse.text()).split('\n\n');
    expect(events.pop()).toBe('');
    expect(events.map((event) => JSON.parse(event.replace(/^data: /, '')).candidates[0].content.parts[0].text)).toEqual(pieces('Twenty-four characters.', TEXT_CHUNK));

    const array = await post('');
    expect(array.headers.get('content-type')).toBe('application/json; charset=UTF-8');
    const items = (await array.json()) as GenAIResponse[];
    expect(items.map((item) => item.candidates![0]!.content!.parts![0]!.text).join('')).toBe('Twenty-four characters.');
  });

  it('sends function calls whole, after the text, and reads them back from a whole response too', async () => {
    const calls = [
      { name: 'run_shell_command', args: { command: 'echo hi', description: 'Say hi' } },
      { name: 'read_file', args: { file_path: 'README.md' }, id: 'call-2', thoughtSignature: 'c2lnbmF0dXJl' },
    ];
    const { models, server } = await start(scriptedGemini([{ text: 'Let me look.', functionCalls: calls }, { functionCalls: calls }, { functionCalls: calls }]));
    const chunks = await collect(await models.generateContentStream({ model: MODEL, contents: user('Look around.') }));
    const parts = chunks.map((c) => c.candidates![0]!.content!.parts!);
    expect(parts.slice(-2)).toEqual([
      [{ functionCall: { name: 'run_shell_command', args: { command: 'echo hi', description: 'Say hi' } } }],
      [{ functionCall: { name: 'read_file', args: { file_path: 'README.md' }, id: 'call-2' }, thoughtSignature: 'c2lnbmF0dXJl' }],
    ]);
    // Function calls finish with STOP, as text does (the SDK 1.30 drops the API's finishMessage: see the raw body below)
    expect(chunks.at(-1)!.candidates![0]!.finishReason).toBe('STOP');
    expect(chunks.flatMap((c) => c.functionCalls ?? [])).toEqual([calls[0], { name: 'read_file', args: { file_path: 'README.md' }, id: 'call-2' }]);

    const whole = await models.generateContent({ model: MODEL, contents: user('Again.') });
    expect(whole.candidates![0]!.content!.parts!.map((p) => Object.keys(p).join('+'))).toEqual(['functionCall', 'functionCall+thoughtSignature']);
    expect(whole.functionCalls!.map((c) => c.name)).toEqual(['run_shell_command', 'read_file']);

    const raw = await fetch(`${server.url}/v1beta/models/${MODEL}:generateContent`, { method: 'POST', headers: { 'x-goog-api-key': KEY }, body: JSON.stringify({ contents: user('Once more.') }) });
    expect(((await raw.json()) as GenAIResponse).candidates![0]).toMatchObject({ finishReason: 'STOP', finishMessage: 'Model generated function call(s).' });
  });

  it('shows the script the next request: its functionResponse, the user text, the functions offered', async () => {
    const seen: GenerateContentRequest[] = [];
    const { models } = await start(
      scriptedGemini([
        (request) => {
          seen.push(request);
          return { functionCalls: [{ name: 'ask_user', args: { question: 'Which database?' } }] };
        },
        (request) => {
          seen.push(request);
          return `You chose ${String(lastFunctionResponse(request)?.response.output)}.`;
        },
      ]),
    );
    const tools = [{ functionDeclarations: [{ name: 'ask_user', description: 'Ask the user.', parametersJsonSchema: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] } }, { name: 'read_file', parameters: { type: 'OBJECT', properties: {} } }] }];
    const config = { systemInstruction: 'You are terse.', tools, temperature: 0.5 };
    const first = await models.generateContent({ model: MODEL, contents: user('Pick a database.'), config });
    const call = first.functionCalls![0]!;

    const history = [
      ...user('Pick a database.'),
      { role: 'model', parts: [{ functionCall: { ...call, id: 'ask_user_1' } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'ask_user_1', name: 'ask_user', response: { output: 'PostgreSQL' } } }] },
    ];
    const second = await models.generateContent({ model: MODEL, contents: history, config });
    expect(second.text).toBe('You chose PostgreSQL.');

    const [a, b] = seen as [GenerateContentRequest, GenerateContentRequest];
    // @google/genai moves `config` into the body's own fields
    expect(a).toMatchObject({ systemInstruction: { parts: [{ text: 'You are terse.' }], role: 'user' }, tools, generationConfig: { temperature: 0.5 } });
    expect(lastUserText(a)).toBe('Pick a database.');
    expect(functionNames(a)).toEqual(['ask_user', 'read_file']);
    expect(functionDeclaration(a, 'ask_user')).toMatchObject({ parametersJsonSchema: { required: ['question'] } });
    expect(lastFunctionResponse(a)).toBeUndefined();
    expect(lastUserText(b)).toBe('');
    expect(functionResponses(b)).toEqual([{ name: 'ask_user', response: { output: 'PostgreSQL' }, id: 'ask_user_1' }]);
  });

  it('plays a script in order and then says it ran out', async () => {
    const { models } = await start(scriptedGemini(['one', async () => ({ text: 'two' })]));
    const texts: Array<string | undefined> = [];
    for (let i = 0; i < 3; i++) texts.push((await models.generateContent({ model: MODEL, contents: user('next') })).text);
    expect(texts).toEqual(['one', 'two', END_OF_SCRIPT]);
  });

  it('hands the script the request index and the model named in the path; countTokens and the model list never reach it', async () => {
    const calls: string[] = [];
    const { models } = await start((_request, index, model) => {
      calls.push(`${index}:${model}`);
      return { text: 'ok' };
    });
    await models.generateContent({ model: 'gemini-3-flash-preview', contents: user('a') });
    const counted = await models.countTokens({ model: MODEL, contents: user('How many tokens is this?') });
    expect(counted.totalTokens).toBeGreaterThan(0);
    const described = await models.get({ model: MODEL });
    expect(described).toMatchObject({ name: `models/${MODEL}`, inputTokenLimit: expect.any(Number), supportedActions: expect.arrayContaining(['generateContent']) });
    const listed = await collect(await models.list());
    expect(listed.map((m) => m.name)).toEqual([`models/${MODEL}`, 'models/gemini-3-flash-preview']);
    await collect(await models.generateContentStream({ model: MODEL, contents: user('b') }));
    expect(calls).toEqual(['0:gemini-3-flash-preview', `1:${MODEL}`]);
  });
});

describe("the fake Gemini API's errors, in Google's shape", () => {
  it('refuses a wrong key with 400 API_KEY_INVALID, a missing key with 403, a wrong bearer token with 401', async () => {
    const { models, server } = await start(scriptedGemini(['never']), { apiKey: 'AIza-the-right-one' });
    const wrong = await apiError(models.generateContent({ model: MODEL, contents: user('hi') }));
    expect(wrong).toMatchObject({ name: 'ApiError', status: 400 });
    expect(wrong.body.error).toEqual({
      code: 400,
      message: 'API key not valid. Please pass a valid API key.',
      status: 'INVALID_ARGUMENT',
      details: [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com', metadata: { service: 'generativelanguage.googleapis.com' } },
        { '@type': 'type.googleapis.com/google.rpc.LocalizedMessage', locale: 'en-US', message: 'API key not valid. Please pass a valid API key.' },
      ],
    });

    const post = (headers: Record<string, string>, query = '') =>
      fetch(`${server.url}/v1beta/models/${MODEL}:generateContent${query}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ contents: user('hi') }) });
    const none = await post({});
    expect(none.status).toBe(403);
    expect(await none.json()).toEqual({ error: { code: 403, message: expect.stringMatching(/^Method doesn't allow unregistered callers/), status: 'PERMISSION_DENIED' } });
    const bearer = await post({ authorization: 'Bearer not-it' });
    expect(bearer.status).toBe(401);
    expect(((await bearer.json()) as { error: { status: string } }).error.status).toBe('UNAUTHENTICATED');
    expect((await post({ authorization: 'Bearer AIza-the-right-one' })).status).toBe(200);
    expect((await post({}, '?key=AIza-the-right-one')).status).toBe(200);
  });

  it('answers an unparsable body and a request without contents with 400 INVALID_ARGUMENT, an unknown URL with a 404 page', async () => {
    const { server } = await start(scriptedGemini(['never']));
    const post = (body: string, path = `/v1beta/models/${MODEL}:generateContent`) => fetch(`${server.url}${path}`, { method: 'POST', headers: { 'x-goog-api-key': KEY, 'content-type': 'application/json' }, body });

    const broken = await post('{"contents": [');
    expect(broken.status).toBe(400);
    const body = (await broken.json()) as { error: { code: number; status: string; message: string; details: unknown[] } };
    expect(body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT', message: expect.stringMatching(/^Invalid JSON payload received\. Unexpected token\./) });
    expect(body.error.details).toEqual([{ '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ description: body.error.message }] }]);

    const empty = await post('{}');
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ error: { code: 400, message: '* GenerateContentRequest.contents: contents is not specified\n', status: 'INVALID_ARGUMENT' } });

    const unknown = await post('{}', '/v1/chat/completions');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/^text\/html/);
    expect(server.requests).toHaveLength(3);
  });

  it('sends scripted 429 (with RetryInfo), 500 and 503 errors, streaming or not, and a failing script as 500 INTERNAL', async () => {
    const { models } = await start(
      scriptedGemini([
        GEMINI_ERRORS.rateLimit(7),
        GEMINI_ERRORS.internal(),
        GEMINI_ERRORS.overloaded(),
        () => {
          throw new Error('the script broke');
        },
      ]),
    );
    const limited = await apiError(models.generateContentStream({ model: MODEL, contents: user('a') }));
    expect(limited.status).toBe(429);
    expect(limited.body.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED', message: expect.stringMatching(/^You exceeded your current quota/) });
    expect(limited.body.error.details).toContainEqual({ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' });

    const internal = await apiError(models.generateContent({ model: MODEL, contents: user('b') }));
    expect(internal).toMatchObject({ status: 500, body: { error: { code: 500, status: 'INTERNAL' } } });
    const overloaded = await apiError(models.generateContent({ model: MODEL, contents: user('c') }));
    expect(overloaded.body.error).toEqual({ code: 503, status: 'UNAVAILABLE', message: 'The model is overloaded. Please try again later.' });
    const broken = await apiError(models.generateContent({ model: MODEL, contents: user('d') }));
    expect(broken.body.error).toEqual({ code: 500, status: 'INTERNAL', message: 'scripted model failed: the script broke' });
  });

  it('cuts a stream after the chunks asked for: the client gets those, then fails', async () => {
    const text = 'This reply is cut off before it can finish.';
    const { models } = await start(scriptedGemini([{ text, cutAfterChunks: 2 }]));
    const got: string[] = [];
    const failure = await (async () => {
      try {
        for await (const chunk of await models.generateContentStream({ model: MODEL, contents: user('go') })) got.push(chunk.text ?? '');
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(got).toEqual(pieces(text, TEXT_CHUNK).slice(0, 2));
    expect(failure).toBeInstanceOf(Error);
  });
});
