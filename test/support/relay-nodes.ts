import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { diesWithTest } from './child-guard.js';
import { freshDatabase, type FreshDatabase } from './postgres.js';
import { waitUntil } from './wait-until.js';

// Several real `askrelay serve` processes on one fresh PostgreSQL database: the nodes of one
// relay, as an operator runs them. Each has its own data folder and name (node-<i>); all
// share the token, the database and a short lease so that a dead node's work moves within
// a test's patience. They start at once, so every start also races the others' migrations.

const BIN = fileURLToPath(new URL('../../bin/askrelay.js', import.meta.url));
export const NODES_TOKEN = 'test-token-0123456789abcdef';
/** The same on every node, as docs/deploy.md recommends: one audit chain, one key. */
export const NODES_AUDIT_KEY = 'test-audit-key-0123456789abcdef';

/** A variable set to undefined is removed from the node's environment (e.g. ASKRELAY_AUDIT_KEY). */
export type NodeEnv = Record<string, string | undefined>;

export interface NodeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RelayNode {
  index: number;
  /** ASKRELAY_NODE_ID: node-<index>. */
  id: string;
  /** Where it listens, as it printed it ("askrelay is running: URL"). */
  url: string;
  port: number;
  pid: number;
  dataDir: string;
  child: ChildProcessWithoutNullStreams;
  /** Everything it printed so far. */
  stdout(): string;
  stderr(): string;
  /** Both streams, labelled, for assertion messages. */
  output(): string;
  exited: Promise<NodeExit>;
  alive(): boolean;
}

export interface StartNodesOptions {
  /** Extra environment for every node; undefined removes a variable the harness sets. */
  env?: NodeEnv;
  /** Environment for one node on top of `env` (e.g. a channel only node 0 knows). */
  nodeEnv?: (index: number) => NodeEnv;
  /** ASKRELAY_LEASE for every node; short so a killed node's work moves quickly. */
  lease?: string;
  /** How long one node may take to become healthy. */
  readyMs?: number;
}

export interface ApiInit extends RequestInit {
  json?: unknown;
  /** Another bearer token (an agent's); default the relay token. */
  token?: string;
}

export interface RelayNodes {
  nodes: RelayNode[];
  db: FreshDatabase;
  token: string;
  url(i: number): string;
  /** fetch against node i with the relay token (or init.token) set. */
  api(i: number, path: string, init?: ApiInit): Promise<Response>;
  /** Signals node i and resolves once it exited. */
  kill(i: number, signal?: NodeJS.Signals): Promise<NodeExit>;
  /** Starts node i again: same name, data folder and port (a load balancer in front finds it again). */
  restart(i: number): Promise<RelayNode>;
  /** Starts one more node on the same database: node-<n>, node-<n+1>, … in the order of the calls. */
  add(env?: NodeEnv): Promise<RelayNode>;
  /** Every node's output, for assertion messages. */
  describe(): string;
  /** Kills every node, drops the database and removes the data folders. */
  stop(): Promise<void>;
}

/** fetch with the bearer token and JSON body set, against any base URL (a node or a load balancer). */
export function apiAt(base: string, path: string, init: ApiInit = {}): Promise<Response> {
  const { json, token = NODES_TOKEN, headers, ...rest } = init;
  return fetch(new URL(path, base), {
    ...rest,
    headers: {
      authorization: `Bearer ${token}`,
      ...(json !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(headers as Record<string, string> | undefined),
    },
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
}

// A test that crashes before stop() must not leave relay processes behind (and where the
// worker itself is killed, child-guard.ts sees to it).
const everyChild = new Set<ChildProcessWithoutNullStreams>();
process.once('exit', () => {
  for (const child of everyChild) child.kill('SIGKILL');
});

interface Spawned {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  exited: Promise<NodeExit>;
}

function spawnServe(port: number, dataDir: string, env: NodeEnv): Spawned {
  // Nothing of the test runner's own ASKRELAY_* leaks into a node.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ASKRELAY_')));
  const merged = Object.fromEntries(Object.entries({ ...base, ...env }).filter((e): e is [string, string] => e[1] !== undefined));
  const [command, args] = diesWithTest(process.execPath, [BIN, 'serve', '--port', String(port), '--data', dataDir]);
  const child = spawn(command, args, { cwd: dataDir, env: merged });
  everyChild.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<NodeExit>((resolve) =>
    child.on('exit', (code, signal) => {
      everyChild.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(new URL('/api/health', url));
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** Spawns one node and resolves once it printed its URL and answers /api/health. */
async function launch(index: number, port: number, dataDir: string, env: NodeEnv, readyMs: number): Promise<RelayNode> {
  const s = spawnServe(port, dataDir, env);
  let exit: NodeExit | undefined;
  void s.exited.then((e) => (exit = e));
  const header = `--- node-${index} stdout ---`;
  const output = () => `${header}\n${s.stdout()}--- node-${index} stderr ---\n${s.stderr()}`;
  try {
    const url = await waitUntil(
      () => {
        if (exit) throw new Error(`node-${index} exited (${exit.signal ?? exit.code}) before it was ready:\n${output()}`);
        return /askrelay is running: (http:\/\/\S+)/.exec(s.stdout())?.[1];
      },
      `node-${index} to print its URL`,
      readyMs,
    );
    await waitUntil(
      async () => {
        if (exit) throw new Error(`node-${index} exited (${exit.signal ?? exit.code}) before it was healthy:\n${output()}`);
        return healthy(url);
      },
      `node-${index} at ${url} to answer /api/health`,
      readyMs,
    );
    return {
      index,
      // A test that unsets ASKRELAY_NODE_ID gets the relay's default name (host:port).
      id: env.ASKRELAY_NODE_ID ?? `${hostname()}:${new URL(url).port}`,
      url,
      port: Number(new URL(url).port),
      pid: s.child.pid!,
      dataDir,
      child: s.child,
      stdout: s.stdout,
      stderr: s.stderr,
      output,
      exited: s.exited,
      alive: () => s.child.exitCode === null && s.child.signalCode === null,
    };
  } catch (err) {
    s.child.kill('SIGKILL');
    // A timeout says only what it waited for; the node's output says why.
    if (!(err as Error).message.includes(header)) (err as Error).message += `\n${output()}`;
    throw err;
  }
}

/**
 * Starts `n` nodes at once on a fresh database. Every node gets ASKRELAY_DATABASE_URL,
 * ASKRELAY_NODE_ID=node-<i>, the shared ASKRELAY_TOKEN and ASKRELAY_AUDIT_KEY, ASKRELAY_LEASE
 * (options.lease, default 15s like the product) and options.env on top.
 */
export async function startNodes(n: number, options: StartNodesOptions = {}): Promise<RelayNodes> {
  const readyMs = options.readyMs ?? 60_000;
  const db = await freshDatabase();
  const nodes: RelayNode[] = [];
  const dirs: string[] = [];
  const envOf = (index: number, more: NodeEnv = {}): NodeEnv => ({
    ASKRELAY_DATABASE_URL: db.url,
    ASKRELAY_NODE_ID: `node-${index}`,
    ASKRELAY_TOKEN: NODES_TOKEN,
    ASKRELAY_AUDIT_KEY: NODES_AUDIT_KEY,
    ...(options.lease ? { ASKRELAY_LEASE: options.lease } : {}),
    ...options.env,
    ...options.nodeEnv?.(index),
    ...more,
  });
  const extraEnv = new Map<number, NodeEnv>();
  let count = n;
  const newDir = (index: number) => {
    const dir = mkdtempSync(join(tmpdir(), `askrelay-node-${index}-`));
    dirs.push(dir);
    return dir;
  };

  const stop = async () => {
    await Promise.all(
      nodes.map(async (node) => {
        if (node.alive()) node.child.kill('SIGKILL');
        await node.exited;
      }),
    );
    await db.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  };

  const started = await Promise.allSettled(Array.from({ length: n }, (_, i) => launch(i, 0, newDir(i), envOf(i), readyMs)));
  for (const result of started) if (result.status === 'fulfilled') nodes.push(result.value);
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await stop();
    throw failed.reason;
  }
  nodes.sort((a, b) => a.index - b.index);

  const node = (i: number) => {
    const found = nodes[i];
    if (!found) throw new Error(`there is no node ${i} (${nodes.length} started)`);
    return found;
  };

  return {
    nodes,
    db,
    token: NODES_TOKEN,
    url: (i) => node(i).url,
    api: (i, path, init) => apiAt(node(i).url, path, init),
    async kill(i, signal = 'SIGKILL') {
      const target = node(i);
      if (target.alive()) target.child.kill(signal);
      return target.exited;
    },
    async restart(i) {
      const old = node(i);
      if (old.alive()) throw new Error(`node-${i} is still running; kill it first`);
      nodes[i] = await launch(i, old.port, old.dataDir, envOf(i, extraEnv.get(i)), readyMs);
      return nodes[i];
    },
    async add(env = {}) {
      const index = count++;
      extraEnv.set(index, env);
      const added = await launch(index, 0, newDir(index), envOf(index, env), readyMs);
      nodes[index] = added;
      return added;
    },
    describe: () => nodes.map((n) => n.output()).join('\n'),
    stop,
  };
}
