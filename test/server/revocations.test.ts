import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { RESYNC, type ClusterEvent } from '../../src/cluster/cluster.js';
import { RelayEvents } from '../../src/relay/events.js';
import { Revocations, revocationKey, type Credential } from '../../src/server/revocations.js';

// The registry of what each credential holds open (src/server/revocations.ts), on its own: the
// paths the HTTP tests (test/api/revocation.test.ts) cannot reach on purpose. A node that was
// cut off from the others checks every open credential again; a revocation heard between a
// request's sign-in and its hold is not missed; a store that cannot answer ends nothing; a
// revocation that cannot be announced is tried again, then said.

/** The two things of a response the registry reads: whether it is closed, and its close. */
function response(): ServerResponse & { ended: boolean } {
  const res = Object.assign(new EventEmitter(), { closed: false, ended: false });
  return res as unknown as ServerResponse & { ended: boolean };
}

const credential = (keys: string[], valid: () => Promise<boolean>, heard = 0): Credential => ({ keys, heard, stillValid: valid });

/** The two methods of the cluster the registry uses, in memory, with the events it published. */
function cluster(failures = 0) {
  const handlers = new Set<(event: ClusterEvent) => void>();
  const published: unknown[] = [];
  let failing = failures;
  return {
    published,
    hear: (event: ClusterEvent) => handlers.forEach((h) => h(event)),
    subscribe: (handler: (event: ClusterEvent) => void) => (handlers.add(handler), () => handlers.delete(handler)),
    publish: async (name: string, data: unknown) => {
      if (failing-- > 0) throw new Error('database away');
      published.push({ name, data });
    },
  };
}

describe('revocations', () => {
  it("ends what the keys name, here and when another node says so; a session's end comes as its session.updated", async () => {
    const bus = cluster();
    const events = new RelayEvents();
    const revocations = new Revocations({ cluster: bus, events });
    revocations.listen();
    const [ada, bea, agent] = [response(), response(), response()];
    revocations.hold(ada, credential([revocationKey.person('ada')], async () => true), () => (ada.ended = true));
    revocations.hold(bea, credential([revocationKey.login('k1'), revocationKey.person('bea')], async () => true), () => (bea.ended = true));
    revocations.hold(agent, credential([revocationKey.session('s1')], async () => true), () => (agent.ended = true));

    await revocations.revoke([revocationKey.person('ada')]);
    expect([ada.ended, bea.ended, agent.ended]).toEqual([true, false, false]);
    expect(bus.published).toEqual([{ name: 'credential.revoked', data: { keys: ['person:ada'] } }]);

    bus.hear({ name: 'credential.revoked', data: { keys: ['login:k1'] } });
    expect(bea.ended).toBe(true);
    events.emit('session.updated', { id: 's1', status: 'idle' });
    expect(agent.ended).toBe(false);
    events.emit('session.updated', { id: 's1', status: 'stopped' });
    expect(agent.ended).toBe(true);
    revocations.stop();
  });

  it('checks every open credential again once the connection to the others is back; a store that does not answer ends nothing', async () => {
    const bus = cluster();
    const revocations = new Revocations({ cluster: bus });
    revocations.listen();
    const [gone, kept, unknown, closed] = [response(), response(), response(), response()];
    revocations.hold(gone, credential(['person:gone'], async () => false), () => (gone.ended = true));
    revocations.hold(kept, credential(['person:kept'], async () => true), () => (kept.ended = true));
    revocations.hold(unknown, credential(['person:unknown'], () => Promise.reject(new Error('database away'))), () => (unknown.ended = true));
    revocations.hold(closed, credential(['person:closed'], async () => false), () => (closed.ended = true));
    closed.emit('close');

    bus.hear({ name: RESYNC, data: null });
    await new Promise((resolve) => setImmediate(resolve));
    expect([gone.ended, kept.ended, unknown.ended, closed.ended]).toEqual([true, false, false, false]);
  });

  it('a request signed in before a revocation it did not see is checked once it holds on; one signed in after is not', async () => {
    const revocations = new Revocations();
    await revocations.revoke(['person:someone-else']);
    let checks = 0;
    const check = async () => (checks++, false);
    const [before, after] = [response(), response()];
    revocations.hold(before, credential(['person:ada'], check, revocations.heard - 1), () => (before.ended = true));
    revocations.hold(after, credential(['person:ada'], check, revocations.heard), () => (after.ended = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect([before.ended, after.ended, checks]).toEqual([true, false, 1]);
  });

  it('a revocation the database does not take is tried again, then said', async () => {
    const lines: string[] = [];
    const once = cluster(2);
    await new Revocations({ cluster: once, retryMs: 1, log: (l) => lines.push(l) }).revoke(['person:ada']);
    expect([once.published.length, lines]).toEqual([1, []]);

    const never = cluster(100);
    await new Revocations({ cluster: never, retryMs: 1, log: (l) => lines.push(l) }).revoke(['person:ada']);
    expect([never.published.length, lines]).toEqual([0, ['could not tell the other nodes that person:ada was revoked (database away)']]);
  });
});
