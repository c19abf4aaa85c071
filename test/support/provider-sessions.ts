import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Card } from '../../src/cards/model.js';
import { Relay } from '../../src/relay/relay.js';
import { SessionManager } from '../../src/sessions/manager.js';
import { describeProviders, runnerFactories, type ProviderDeclaration } from '../../src/sessions/providers.js';
import type { Session } from '../../src/sessions/model.js';
import { asyncSessions } from '../../src/store/session-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncCards } from '../../src/store/store.js';
import { waitUntil } from './wait-until.js';

/**
 * One provider's sessions on a relay core of their own (a SQLite file in a fresh folder, the
 * session manager with only that provider): what the provider tests that run a real agent
 * need, without an HTTP server. `restart()` makes the manager anew on the same relay and store,
 * as a relay starting again does.
 */
export async function providerSessions(provider: ProviderDeclaration, env: (dir: string) => Record<string, string | undefined>, waitMs: number) {
  const dir = mkdtempSync(join(tmpdir(), `askrelay-${provider.id}-test-`));
  const store = new SqliteStore(join(dir, 'askrelay.sqlite'));
  const relay = new Relay({ store: asyncCards(store), waits: { default: waitMs } });
  await relay.start();
  const manager = () => {
    const fullEnv = { PATH: process.env.PATH, ASKRELAY_WORKDIR: dir, ...env(dir) };
    const providers = runnerFactories([provider], describeProviders([provider], fullEnv, waitMs));
    return new SessionManager({ relay, store: asyncSessions(store.sessions), providers, env: fullEnv, stuckAfterMs: 10 * 60_000 });
  };
  const h = {
    dir,
    relay,
    manager: manager(),
    async restart() {
      await h.manager.close();
      h.manager = manager();
      await h.manager.recover();
    },
    pendingCard: (sessionId: string): Promise<Card> => waitUntil(async () => (await relay.list({ sessionId, status: 'pending' }))[0], 'a pending card', 45_000),
    idle: (id: string): Promise<Session> =>
      waitUntil(async () => {
        const s = await h.manager.get(id);
        if (s.status === 'failed') throw new Error(`session failed: ${s.error}`);
        return s.status === 'idle' ? s : undefined;
      }, `${id} idle`, 45_000),
    async close() {
      await h.manager.close();
      relay.stop();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}

export type ProviderSessions = Awaited<ReturnType<typeof providerSessions>>;
