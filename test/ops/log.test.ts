import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastUserText, startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { diesWithTest } from '../support/child-guard.js';
import { runCli } from '../support/cli.js';
import { waitUntil } from '../support/wait-until.js';

// The log of a real `askrelay serve` (stdout not a terminal: JSON lines): what an operator
// reads after a session started and stopped, one that failed, a refused login, a body over
// the limit; never a token and never an answer's text. ASKRELAY_LOG picks the level, and a
// terminal gets pretty lines.

const BIN = fileURLToPath(new URL('../../bin/askrelay.js', import.meta.url));
const TOKEN = 'log-test-token-0123456789abcdef';
const SECRET_ANSWER = 'the-answer-nobody-may-log-7f3a';

let model: AnthropicServer;
const dirs: string[] = [];
const children: ChildProcess[] = [];

beforeAll(async () => {
  model = await startAnthropicServer({
    model: (request) =>
      lastUserText(request).includes('fail') ? { error: { status: 401, type: 'authentication_error', message: 'invalid x-api-key' } } : { text: 'Done.' },
  });
});
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await model?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const clean = () => Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ASKRELAY_')));

/** `askrelay serve` on a fresh data folder, once it says it runs: its URL and what it printed so far. */
async function serve(env: Record<string, string>, viaTerminal = false) {
  const data = mkdtempSync(join(tmpdir(), 'askrelay-log-'));
  dirs.push(data);
  const argv = [BIN, 'serve', '--port', '0', '--data', data];
  // `script` gives the relay a terminal for stdout, as an operator's shell does.
  const [command, args] = viaTerminal ? ['script', ['-qec', [process.execPath, ...argv].join(' '), '/dev/null']] : diesWithTest(process.execPath, argv);
  const child = spawn(command, args, { env: { ...clean(), ASKRELAY_TOKEN: TOKEN, ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'dummy', ...env } });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  await waitUntil(() => out.includes('Ctrl+C'), 'serve to start', 20_000);
  const url = /askrelay is running: (\S+)/.exec(out)![1];
  const stop = async () => {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('close', resolve));
    return out;
  };
  return { url, output: () => out, stop };
}

const api = (url: string, path: string, init: RequestInit & { json?: unknown } = {}) =>
  fetch(new URL(path, url), {
    ...init,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) },
    ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
  });

type Line = { level: string; time: string; event?: string; msg: string; [key: string]: unknown };
const jsonLines = (out: string): Line[] => out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Line);

async function sessionUntil(url: string, id: string, status: string) {
  return waitUntil(async () => {
    const s = (await (await api(url, `/api/sessions/${id}`)).json()) as { status: string };
    return s.status === status ? s : undefined;
  }, `session ${id} ${status}`);
}

describe('the log', () => {
  it('says what an operator needs, one JSON line each, without tokens or answers', async () => {
    const relay = await serve({ ASKRELAY_LOG: 'info' });
    const origin = new URL(relay.url).origin;
    expect((await fetch(new URL('/api/login', relay.url), { method: 'POST', headers: { 'content-type': 'application/json', origin }, body: JSON.stringify({ token: 'a-wrong-token-0123456789abcdef' }) })).status).toBe(401);
    expect((await api(relay.url, '/api/cards', { method: 'POST', body: JSON.stringify({ questions: [{ text: 'x'.repeat(70_000) }] }) })).status).toBe(413);

    const ok = (await (await api(relay.url, '/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt: 'Say done.' } })).json()) as { id: string };
    await sessionUntil(relay.url, ok.id, 'idle');
    expect((await api(relay.url, `/api/sessions/${ok.id}`, { method: 'DELETE' })).status).toBe(200);
    const failing = (await (await api(relay.url, '/api/sessions', { method: 'POST', json: { provider: 'claude', engine: 'messages', prompt: 'Please fail.' } })).json()) as { id: string };
    await sessionUntil(relay.url, failing.id, 'failed');

    const card = (await (await api(relay.url, '/api/cards', { method: 'POST', json: { questions: [{ id: 'q', text: 'Anything?' }] } })).json()) as { id: string };
    expect((await api(relay.url, `/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { q: { selected: [], text: SECRET_ANSWER } } } })).status).toBe(200);

    const out = await relay.stop();
    const lines = jsonLines(out);
    for (const line of lines) {
      expect(line.level, JSON.stringify(line)).toMatch(/^(info|warn|error)$/);
      expect(Date.parse(line.time)).toBeGreaterThan(0);
      expect(typeof line.msg).toBe('string');
    }
    const of = (event: string) => lines.filter((l) => l.event === event);
    expect(of('relay.started')[0]).toMatchObject({ level: 'info', store: 'sqlite', url: relay.url });
    expect(of('auth.refused')).toEqual([expect.objectContaining({ level: 'warn', path: '/api/login', code: 'unauthorized', ip: '127.0.0.1' })]);
    expect(of('limit.reached')).toEqual([expect.objectContaining({ level: 'warn', path: '/api/cards', code: 'body_too_large' })]);
    expect(of('session.started').map((l) => l.sessionId)).toEqual([ok.id, failing.id]);
    expect(of('session.started')[0]).toMatchObject({ provider: 'claude', engine: 'messages' });
    expect(of('session.stopped')).toEqual([expect.objectContaining({ sessionId: ok.id, provider: 'claude' })]);
    expect(of('session.failed')).toEqual([expect.objectContaining({ level: 'warn', sessionId: failing.id, provider: 'claude' })]);
    expect(String(of('session.failed')[0].error)).toMatch(/401|x-api-key|authentication/i);
    expect(of('relay.stopping')).toHaveLength(1);
    // Cards are logged at debug only.
    expect(of('card.created')).toEqual([]);
    const logged = lines.map((l) => JSON.stringify(l)).join('\n');
    expect(logged).not.toContain(TOKEN);
    expect(logged).not.toContain('a-wrong-token');
    expect(logged).not.toContain(SECRET_ANSWER);
  });

  it('ASKRELAY_LOG=warn keeps only warnings; debug adds every card; a wrong level stops serve with a sentence', async () => {
    const quiet = await serve({ ASKRELAY_LOG: 'warn' });
    await fetch(new URL('/api/cards', quiet.url), { headers: { authorization: 'Bearer nope' } });
    const quietLines = jsonLines(await quiet.stop());
    expect(quietLines.map((l) => l.event)).toEqual(['auth.refused']);

    const loud = await serve({ ASKRELAY_LOG: 'debug' });
    const card = (await (await api(loud.url, '/api/cards', { method: 'POST', json: { questions: [{ text: 'Yes?', options: ['Yes', 'No'] }] } })).json()) as { id: string };
    await api(loud.url, `/api/cards/${card.id}/skip`, { method: 'POST' });
    const loudLines = jsonLines(await loud.stop());
    expect(loudLines.filter((l) => l.event?.startsWith('card.'))).toEqual([
      expect.objectContaining({ level: 'debug', event: 'card.created', cardId: card.id, provider: 'api' }),
      expect.objectContaining({ level: 'debug', event: 'card.closed', cardId: card.id, status: 'skipped' }),
    ]);

    const data = mkdtempSync(join(tmpdir(), 'askrelay-log-'));
    dirs.push(data);
    const wrong = await runCli(['serve', '--port', '0', '--data', data], { ASKRELAY_LOG: 'chatty' }, data);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('ASKRELAY_LOG must be one of debug, info, warn, error, silent (got "chatty")');
  });

  it('writes pretty lines, not JSON, when stdout is a terminal', async () => {
    const relay = await serve({ ASKRELAY_LOG: 'info' }, true);
    await fetch(new URL('/api/cards', relay.url), { headers: { authorization: 'Bearer nope' } });
    await waitUntil(() => relay.output().includes('a request was refused'), 'the refusal to be written');
    const out = await relay.stop();
    expect(out).toMatch(/INFO.*askrelay is listening/);
    expect(out).toMatch(/WARN.*a request was refused/);
    expect(jsonLines(out)).toEqual([]);
  });
});
