import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveConfig, type ServeConfig } from '../../src/config.js';
import { startRelay, type RunningRelay } from '../../src/start.js';
import { FakeClock } from './fake-clock.js';
import { startTwoNodes, TWO_NODES } from './two-node-relay.js';

export interface TestRelay extends RunningRelay {
  dataDir: string;
  /** fetch against the relay with the bearer token already set. */
  api(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  stop(): Promise<void>;
}

/**
 * A real relay on an ephemeral loopback port with its own temporary SQLite file; give a data
 * folder and a port to start it again where an earlier one stopped; `extra` sets what no variable
 * sets yet (a PostgreSQL database). With ASKRELAY_TEST_NODES=2 (and no database in `extra`):
 * two nodes on one fresh PostgreSQL database instead (test/support/two-node-relay.ts).
 */
export async function startTestRelay(env: Record<string, string> = {}, dataDir?: string, port = '0', extra: Partial<ServeConfig> = {}): Promise<TestRelay> {
  if (TWO_NODES && !extra.databaseUrl) return startTwoNodes(startOneRelay, env, dataDir, port, extra);
  return startOneRelay(env, dataDir, port, extra);
}

/** startTestRelay on a clock of its own, set to now (or `at`): its time moves only when the test advances it. */
export async function startRelayWithClock(env: Record<string, string> = {}, dataDir?: string, port = '0', at = Date.now()): Promise<{ relay: TestRelay; clock: FakeClock }> {
  const clock = new FakeClock(at);
  return { relay: await startTestRelay(env, dataDir, port, { clock }), clock };
}

async function startOneRelay(env: Record<string, string>, dataDir: string | undefined, port: string, extra: Partial<ServeConfig>): Promise<TestRelay> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'askrelay-test-'));
  // Providers get the real environment (PATH, HOME for Claude Code) minus the relay's own settings.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ASKRELAY_')));
  const config = serveConfig({ port, data: dir }, { ...inherited, ASKRELAY_TOKEN: 'test-token-0123456789abcdef', ASKRELAY_LOG: 'error', ...env });
  const running = await startRelay({ ...config, ...extra });
  return {
    ...running,
    dataDir: dir,
    api(path, init = {}) {
      const { json, headers, ...rest } = init;
      return fetch(new URL(path, running.url), {
        ...rest,
        headers: {
          authorization: `Bearer ${running.token}`,
          ...(json !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(headers as Record<string, string>),
        },
        ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
      });
    },
    async stop() {
      await running.close();
      if (!dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
