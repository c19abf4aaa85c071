import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { cursorDialect } from '../../providers/cursor/index.js';
import type { AsyncCallStore } from '../../src/store/call-store.js';
import { askCall, CallWaits, type ToolCall } from '../../src/server/mcp/call-waits.js';
import { Relay } from '../../src/relay/relay.js';
import { postgresStores } from '../../src/store/postgres/postgres-stores.js';
import type { Stores } from '../../src/store/stores.js';
import { freshDatabase, type FreshDatabase } from '../support/postgres.js';
import { waitUntil } from '../support/wait-until.js';

// An MCP call's result is handed over once its response was written, and only then stored as
// delivered; on PostgreSQL that write takes a moment. A client that got the answer and asks
// the same question again at once must get a new card, not the answer it already has; a
// client whose response broke off (or never went out) gets that answer when it re-sends.
// (Found by the two-node run of test/providers/mcp-reattach.test.ts.) The call store here
// stores a handover only when the test lets it, so the second call comes in that moment.

const HOUR = 3_600_000;
const QUESTION = { questions: [{ question: 'Which database?', header: 'Database', options: [{ label: 'PostgreSQL' }, { label: 'SQLite' }] }] };

let db: FreshDatabase;
let stores: Stores;
let relay: Relay;

beforeEach(async () => {
  db = await freshDatabase();
  stores = await postgresStores(db.url, randomBytes(32), () => {});
  relay = new Relay({ store: stores.cards, waits: { default: HOUR } });
  await relay.start();
});
afterEach(async () => {
  relay.stop();
  await stores.close();
  await db.drop();
});

function toolCall(requestId: number, delivered?: Promise<boolean>): ToolCall {
  return {
    arguments: QUESTION,
    mcpSessionId: `session-${requestId}`,
    requestId,
    cancelled: new AbortController().signal,
    gone: new AbortController().signal,
    progress: async () => {},
    ...(delivered ? { delivered } : {}),
  };
}

/**
 * The cursor dialect's calls over the real call store, whose handovers wait for `release()`;
 * `looked()` counts the calls that have had the store's answer to which earlier calls to re-attach to.
 */
function gatedWaits() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let looked = 0;
  const calls = new Proxy(stores.calls, {
    get(target, name, receiver) {
      if (name === 'open') {
        return async (...args: Parameters<AsyncCallStore['open']>) => {
          const found = await target.open(...args);
          looked += 1;
          return found;
        };
      }
      if (name !== 'delivered') return Reflect.get(target, name, receiver);
      return async (...args: Parameters<AsyncCallStore['delivered']>) => {
        await gate;
        return target.delivered(...args);
      };
    },
  });
  const waits = new CallWaits(relay, calls, { progressIntervalMs: HOUR, reattachGraceMs: 60_000 });
  return { waits: { call: (call: ToolCall) => askCall(waits, cursorDialect, call) }, release, looked: () => looked };
}

const pendingOtherThan = (id?: string) =>
  waitUntil(async () => (await relay.list({ status: 'pending' })).find((c) => c.id !== id), 'a pending card');

/** The first call, answered with SQLite; `delivered` says whether its response went out. */
async function answeredFirst(waits: { call(call: ToolCall): Promise<unknown> }, delivered: Promise<boolean>) {
  const first = waits.call(toolCall(1, delivered));
  const card = await pendingOtherThan();
  await relay.answer(card.id, { q1: { selected: ['SQLite'] } });
  await first;
  return card;
}

const textOf = (result: unknown) => (result as { content: { text: string }[] }).content[0].text;

it('the same question asked again right after the answer arrived is a new card', async () => {
  const { waits, release, looked } = gatedWaits();
  const card = await answeredFirst(waits, Promise.resolve(true));
  // The client has the answer and asks again while the relay still stores the handover: the
  // handover is let through only once the second call has found the first one's card.
  const again = waits.call(toolCall(2));
  await waitUntil(() => looked() === 2, 'the second call to look for an earlier card');
  release();
  const outcome = await Promise.race([again.then((r) => `answered at once: ${textOf(r)}`), pendingOtherThan(card.id)]);
  expect(outcome).toMatchObject({ status: 'pending', questions: [{ text: 'Which database?' }] });
  await relay.answer((outcome as { id: string }).id, { q1: { selected: ['PostgreSQL'] } });
  expect(textOf(await again)).toBe('Which database? → PostgreSQL');
});

it.each([
  ['broke off', Promise.resolve(false)],
  ['never went out', new Promise<boolean>(() => {})],
])('a call re-sent because its response %s gets the answer it missed', async (_how, delivered) => {
  const { waits, release } = gatedWaits();
  release();
  const card = await answeredFirst(waits, delivered);
  expect(textOf(await waits.call(toolCall(2)))).toBe('Which database? → SQLite');
  expect((await relay.list({ status: 'pending' })).map((c) => c.id)).not.toContain(card.id);
});
