// The moving parts of the nodes benchmark (bench/nodes-bench.ts): a cluster of relay
// processes (one on SQLite, or N sharing one PostgreSQL database), an event stream on each
// node, and the cycle every measurement is made of.
//
// On N nodes a cycle crosses nodes the way an agent and a human on different nodes do: the
// card is created on node a (the agent's), its card.created is awaited on node b's event
// stream (the human's page), the agent's long poll waits on node a and the answer goes to
// node b. With one node a = b.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchDatabase, type BenchDatabase } from './bench-database.js';
import { Child, SseClient, request, type SseEvent } from './client.js';
import { BENCH_ANSWER, benchDraft } from './draft.js';

export type Column = { store: 'sqlite' } | { store: 'postgres'; nodes: number };

export const columnLabel = (c: Column) => (c.store === 'sqlite' ? 'SQLite' : `PG ${c.nodes} node${c.nodes === 1 ? '' : 's'}`);

const AUDIT_KEY = 'bench-audit-key-0123456789abcdef';

/** One event stream on a node, handing each card.created to whoever expects that title. */
export class Watch {
  private readonly expected = new Map<string, (e: SseEvent) => void>();

  constructor(readonly sse: SseClient) {
    sse.on((e) => {
      if (e.event !== 'card.created') return;
      const title = (JSON.parse(e.data) as { title?: string }).title;
      const hit = title === undefined ? undefined : this.expected.get(title);
      if (!hit) return;
      this.expected.delete(title!);
      hit(e);
    });
  }

  /** Registered before the POST is sent, so an event faster than its response is not missed. */
  expect(title: string) {
    let resolve!: (e: SseEvent) => void;
    const seen = new Promise<SseEvent>((r) => (resolve = r));
    this.expected.set(title, resolve);
    const cancel = () => this.expected.delete(title);
    return {
      within: (ms: number, failure: string) =>
        withTimeout(seen, ms, failure).catch((err: unknown) => {
          cancel();
          throw err;
        }),
      cancel,
    };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, failure: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(failure)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export class Cluster {
  private constructor(
    readonly nodes: Child[],
    readonly watches: Watch[],
    readonly db: BenchDatabase | undefined,
    private readonly dirs: string[],
  ) {}

  static async start(column: Column, execArgv: string[], asyncCommit = false): Promise<Cluster> {
    const count = column.store === 'sqlite' ? 1 : column.nodes;
    const db = column.store === 'postgres' ? await benchDatabase({ asyncCommit }) : undefined;
    const dirs: string[] = [];
    const nodes: Child[] = [];
    const watches: Watch[] = [];
    const cluster = new Cluster(nodes, watches, db, dirs);
    try {
      // One after the other: the bench measures running nodes, not a concurrent start.
      for (let i = 0; i < count; i++) {
        dirs.push(mkdtempSync(join(tmpdir(), 'askrelay-bench-node-')));
        // Every node: its own data folder, the same token (the bench child sets it) and audit key.
        const env = db ? { ASKRELAY_DATABASE_URL: db.url, ASKRELAY_NODE_ID: `bench-${i}`, ASKRELAY_AUDIT_KEY: AUDIT_KEY } : {};
        nodes.push(await Child.start(['relay', dirs[i]], execArgv, { BENCH_RELAY_ENV: JSON.stringify(env) }));
      }
      for (const node of nodes) {
        const sse = new SseClient();
        watches.push(new Watch(sse));
        await sse.open(node.url, '/api/events', node.token);
      }
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  async stop(): Promise<void> {
    this.watches.forEach((w) => w.sse.close());
    await Promise.all(this.nodes.map((n) => n.stop()));
    this.dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
    await this.db?.drop();
  }
}

/** One cycle: create on node a, seen on node b's stream; long poll on a, answered on b. */
export async function cycle(cluster: Cluster, a: number, b: number, title: string, timeoutMs: number) {
  const node = cluster.nodes[a];
  const other = cluster.nodes[b];
  const seconds = Math.ceil(timeoutMs / 1000);
  const expectation = cluster.watches[b].expect(title);
  const t0 = performance.now();
  const post = await request(node.url, 'POST', '/api/cards', { token: node.token, json: benchDraft(title) });
  if (post.status !== 201) {
    expectation.cancel();
    throw new Error(`POST /api/cards on node ${a}: HTTP ${post.status} ${post.text}`);
  }
  const created = await expectation.within(
    timeoutMs,
    `card.created of a card made on node ${a} did not reach node ${b}'s event stream within ${seconds} s` +
      (a === b ? '' : ': events do not cross nodes (is the event bus wired into the relay?)'),
  );
  const id = (JSON.parse(post.text) as { id: string }).id;

  // The server ends the long poll with 204 after `seconds`: a release that never comes fails
  // the column instead of hanging it.
  const wait = request(node.url, 'GET', `/api/cards/${id}/wait?timeout=${seconds}`, { token: node.token });
  // Barrier (see docs/performance.md): once node a answers this, it has read the long poll.
  const barrier = await request(node.url, 'GET', '/api/health');
  if (barrier.status !== 200) throw new Error(`health on node ${a}: HTTP ${barrier.status}`);
  const t1 = performance.now();
  const answer = await request(other.url, 'POST', `/api/cards/${id}/answer`, { token: other.token, json: { answers: BENCH_ANSWER } });
  const released = await wait;
  if (answer.status !== 200) throw new Error(`answer on node ${b}: HTTP ${answer.status} ${answer.text}`);
  if (released.status === 204) {
    throw new Error(
      `the answer on node ${b} did not release the long poll on node ${a} within ${seconds} s` +
        (a === b ? '' : ': events do not cross nodes (is the event bus wired into the relay?)'),
    );
  }
  if (released.status !== 200 || (JSON.parse(released.text) as { status: string }).status !== 'answered') {
    throw new Error(`wait on node ${a}: HTTP ${released.status} ${released.text}`);
  }
  return { sse: created.at - t0, release: released.at - t1 };
}

export type Sample = Awaited<ReturnType<typeof cycle>>;

/** `clients` loops of back-to-back cycles until `ms` has passed; client k lives on node k mod N. */
export async function concurrent(cluster: Cluster, clients: number, ms: number, tag: string, timeoutMs: number) {
  const n = cluster.nodes.length;
  const samples: Sample[] = [];
  const errors: unknown[] = [];
  const start = performance.now();
  const end = start + ms;
  let serial = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, k) => {
      const a = k % n;
      const b = (a + 1) % n;
      try {
        while (!errors.length && performance.now() < end) samples.push(await cycle(cluster, a, b, `${tag} c${k} ${serial++}`, timeoutMs));
      } catch (err) {
        errors.push(err);
      }
    }),
  );
  if (errors.length) throw errors[0];
  // Cycles started before the end finish after it: count them over the time they really took.
  return { samples, seconds: (performance.now() - start) / 1000 };
}
