import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// GET /api/providers: the registry (providers/index.ts) as the page, the CLI help and any
// client read it, each engine's card wait from the running relay's configuration.

let relay: TestRelay;
let tuned: TestRelay;
beforeAll(async () => {
  [relay, tuned] = await Promise.all([startTestRelay(), startTestRelay({ ASKRELAY_WAIT: '90m', ASKRELAY_WAIT_EXTENSION: '45s' })]);
});
afterAll(() => Promise.all([relay.stop(), tuned.stop()]));

const ANTHROPIC = (wait: number) => [
  { id: 'code', name: 'Claude Code', default: true, waitSeconds: wait },
  { id: 'messages', name: 'the relay’s own Messages API loop', default: false, waitSeconds: wait },
];
const COPILOT = (wait: number, extension: number) => [
  { id: 'sdk', name: 'Copilot SDK; askrelay’s ask_user replaces the built-in one', default: true, waitSeconds: wait },
  { id: 'extension', name: 'Copilot SDK; Copilot’s own ask_user passes through', default: false, waitSeconds: extension, askUserVariants: ['classic', 'form'] },
];
const expected = (wait: number, extension: number) => ({
  providers: [
    { id: 'claude', name: 'Claude', engines: ANTHROPIC(wait), variables: ['ANTHROPIC_BASE_URL', 'ANTHROPIC_API_KEY'] },
    { id: 'deepseek', name: 'DeepSeek', engines: ANTHROPIC(wait), variables: ['DEEPSEEK_BASE_URL', 'DEEPSEEK_API_KEY'] },
    { id: 'copilot', name: 'GitHub Copilot', engines: COPILOT(wait, extension), variables: ['COPILOT_PROVIDER_BASE_URL', 'COPILOT_PROVIDER_API_KEY', 'COPILOT_MODEL'] },
    { id: 'openai', name: 'OpenAI', engines: COPILOT(wait, extension), variables: ['OPENAI_BASE_URL', 'OPENAI_API_KEY'] },
    {
      id: 'grok',
      name: 'Grok',
      engines: [{ id: 'chat', name: 'Chat Completions; no question tool, Grok asks in its reply', default: true, waitSeconds: wait }],
      variables: ['XAI_BASE_URL', 'XAI_API_KEY'],
    },
    {
      id: 'codex',
      name: 'Codex',
      engines: [{ id: 'acp', name: 'Codex through the Agent Client Protocol (codex-acp)', default: true, waitSeconds: wait }],
      variables: ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'CODEX_MODEL'],
    },
    {
      id: 'gemini',
      name: 'Gemini CLI',
      engines: [{ id: 'acp', name: 'Gemini CLI through the Agent Client Protocol (--acp)', default: true, waitSeconds: wait }],
      variables: ['GOOGLE_GEMINI_BASE_URL', 'GEMINI_API_KEY', 'GEMINI_MODEL'],
    },
  ],
});

describe('GET /api/providers', () => {
  it('lists every provider in order, its engines (the default marked), their waits and the variables it reads', async () => {
    const res = await relay.api('/api/providers');
    expect(res.status).toBe(200);
    // Byte for byte: key order too, as docs/api.md shows it.
    expect(await res.text()).toBe(JSON.stringify(expected(8 * 3600, 2 * 3600)));
  });

  it('follows ASKRELAY_WAIT and ASKRELAY_WAIT_EXTENSION', async () => {
    expect(await (await tuned.api('/api/providers')).json()).toEqual(expected(90 * 60, 45));
  });

  it('is 401 without the token, and open to the page\'s cookie', async () => {
    const bare = await fetch(new URL('/api/providers', relay.url));
    expect(bare.status).toBe(401);
    expect((await bare.json()).error.code).toBe('unauthorized');
    const login = await fetch(new URL('/api/login', relay.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: new URL(relay.url).origin, 'sec-fetch-site': 'same-origin' },
      body: JSON.stringify({ token: relay.token }),
    });
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const withCookie = await fetch(new URL('/api/providers', relay.url), { headers: { cookie } });
    expect(withCookie.status).toBe(200);
    expect(((await withCookie.json()) as { providers: { id: string }[] }).providers.map((p) => p.id)).toEqual(['claude', 'deepseek', 'copilot', 'openai', 'grok', 'codex', 'gemini']);
  });
});
