import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { geminiProvider } from '../../providers/gemini/index.js';
import { geminiHome } from '../../providers/gemini/runner.js';
import type { Session } from '../../src/sessions/model.js';
import { startGeminiServer, type GeminiServer } from '../fakes/gemini-server.js';
import { providerSessions, type ProviderSessions } from '../support/provider-sessions.js';
import { waitUntil } from '../support/wait-until.js';

// The real Gemini CLI's private HOME (docs/providers/gemini.md): its settings hold the
// session's MCP token, so the folder goes when the session ends (stopped, failed, the relay
// shutting down), and a folder in the way that other users can reach refuses the session.
// TMPDIR is this file's own (each test file runs in a process of its own): the folders of the
// other Gemini tests are never touched.

const scratch = mkdtempSync(join(tmpdir(), 'askrelay-gemini-home-'));
process.env.TMPDIR = scratch;
const HOUR = 3_600_000;

let server: GeminiServer;
let h: ProviderSessions | undefined;
beforeAll(async () => {
  server = await startGeminiServer({ model: () => ({ text: 'Hello.' }) });
});
afterEach(async () => {
  await h?.close();
  h = undefined;
});
afterAll(async () => {
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function idleSession(): Promise<Session> {
  h = await providerSessions(geminiProvider, () => ({ GOOGLE_GEMINI_BASE_URL: server.url, GEMINI_API_KEY: 'AIza-test', GEMINI_MODEL: 'gemini-2.5-flash' }), HOUR);
  const session = await h.manager.start({ provider: 'gemini', prompt: 'Say hello.' });
  await h.idle(session.id);
  // The session's HOME is there while it runs, its settings naming the MCP server's token.
  expect(readFileSync(join(geminiHome(session.id), '.gemini', 'settings.json'), 'utf8')).toMatch(/"Authorization": "Bearer [^"]+"/);
  return session;
}

const failedSession = (id: string) =>
  waitUntil(async () => {
    const s = await h!.manager.get(id);
    return s.status === 'failed' ? s : undefined;
  }, 'the session to fail', 45_000);

describe("a Gemini session's private HOME", { timeout: 90_000 }, () => {
  it('is removed when the session is stopped', async () => {
    const session = await idleSession();
    await h!.manager.stop(session.id);
    expect(existsSync(geminiHome(session.id))).toBe(false);
  });

  it('is removed when the relay shuts down, and when the session fails (after the restart it cannot load its chat)', async () => {
    const session = await idleSession();
    await h!.manager.close();
    expect(existsSync(geminiHome(session.id))).toBe(false);
    // The next start: the next message launches Gemini CLI in a new HOME, it cannot load its
    // chat, the session fails, and that HOME goes too.
    await h!.restart();
    await h!.manager.message(session.id, 'Still there?').catch(() => undefined);
    const failed = await failedSession(session.id);
    expect(failed.error).toMatch(/^Gemini CLI /);
    await waitUntil(() => !existsSync(geminiHome(session.id)), "the failed session's HOME to go");
  });

  it.each([
    ['other users can reach', (folder: string) => chmodSync(folder, 0o777), 'other users can reach it (mode 0777; it must be 0700)'],
    ['another user (nobody) owns', (folder: string) => chownSync(folder, 65534, 65534), `it belongs to another user (uid 65534, this relay runs as ${process.getuid!()})`],
  ])('refuses to start in a folder %s, saying which and why', async (_name, spoil, why) => {
    const folder = join(scratch, `askrelay-${process.getuid!()}`, 'gemini');
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    spoil(folder);
    try {
      h = await providerSessions(geminiProvider, () => ({ GOOGLE_GEMINI_BASE_URL: server.url, GEMINI_API_KEY: 'AIza-test' }), HOUR);
      const session = await h.manager.start({ provider: 'gemini', prompt: 'Say hello.' });
      const failed = await failedSession(session.id);
      expect(failed.error).toBe(`askrelay will not keep Gemini CLI's private HOME in ${folder}: ${why}. Remove that folder (or point TMPDIR elsewhere) and start the session again.`);
      expect(existsSync(join(folder, session.id))).toBe(false);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
