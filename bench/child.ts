// The server side of the benchmark, run in its own process (forked by bench/run.ts with
// --expose-gc) so that neither the harness's HTTP client nor its bookkeeping shares the
// server's event loop or pollutes its memory numbers.
//
//   node --expose-gc --import tsx bench/child.ts bare
//   node --expose-gc --import tsx bench/child.ts relay <dataDir>
//   node --expose-gc --import tsx bench/child.ts floor sqlite | floor postgres <url>  (bench/floor-server.ts)
//   node --expose-gc --import tsx bench/child.ts pushsink hang|fail
//
// It talks to the parent over the IPC channel: one request message in, one reply out.

import { serve, type ServerType } from '@hono/node-server';
import Database from 'better-sqlite3';
import { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { createECDH, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeHeapSnapshot } from 'node:v8';
import type { Card } from '../src/cards/model.js';
import { serveConfig } from '../src/config.js';
import { DB_FILE, startRelay, type RunningRelay } from '../src/start.js';
import { SqliteStore } from '../src/store/sqlite-store.js';
import webpush from 'web-push';
import { cardPayload } from '../src/push/push-sender.js';
import { PushEncryptor } from '../src/push/push-encryptor.js';
import { BENCH_ANSWER, benchDraft } from './draft.js';
import { runFloor } from './floor-server.js';

export type ChildRequest =
  | { cmd: 'fill'; pending: number }
  | { cmd: 'make'; cards: number }
  | { cmd: 'waiting' }
  | { cmd: 'heapSnapshot'; file: string }
  | { cmd: 'serverTimes'; reset?: boolean }
  | { cmd: 'warm'; cards: number }
  | { cmd: 'mem' }
  | { cmd: 'restart'; makeOverdue?: boolean }
  | { cmd: 'encryptCost'; subscriptions: number; rounds: number }
  | { cmd: 'sinkStats' }
  | { cmd: 'dropConnections' }
  | { cmd: 'exit' };

export interface Memory {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** The SQLite file plus its WAL, in bytes (only for a relay). */
  dbBytes?: number;
}

export type ChildReply =
  | { ok: true; url: string; token?: string }
  | { ok: true; pending: number; ms: number }
  | { ok: true; ids: string[] }
  | { ok: true; waiting: number }
  | { ok: true; memory: Memory }
  | { ok: true; times: Record<string, number[]>; cpu: NodeJS.CpuUsage }
  | { ok: true; ms: number; url: string; recovered: { expired: number; pending: number } }
  | { ok: true; msPerRound: number[]; mainMsPerRound: number[] }
  | { ok: true; sink: { connections: number; requests: number; open: number } }
  | { ok: false; error: string };

// Server-side time per request, from Node's 'request' event to the response's 'finish'
// (handed to the kernel): what the server itself spends, without the client or the network.
const serverTimes: Record<string, number[]> = {};
const routeOf = (method: string | undefined, url: string | undefined) =>
  `${method} ${(url ?? '').split('?')[0].replace(/\/api\/cards\/[^/]+/, '/api/cards/:id')}`;
const originalEmit = http.Server.prototype.emit;
http.Server.prototype.emit = function (this: http.Server, event: string, ...args: unknown[]) {
  if (event === 'request') {
    const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
    const start = performance.now();
    res.once('finish', () => (serverTimes[routeOf(req.method, req.url)] ??= []).push(performance.now() - start));
  }
  return originalEmit.apply(this, [event, ...args] as Parameters<typeof originalEmit>);
} as typeof http.Server.prototype.emit;

const send = (reply: ChildReply) => process.send!(reply);

function gcNow(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run the child with --expose-gc');
  // Twice: the first pass can leave objects that only a second one frees (weak refs, finalizers).
  gc();
  gc();
}

function memory(dbFile?: string): Memory {
  gcNow();
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  const size = (file: string) => (existsSync(file) ? statSync(file).size : 0);
  const dbBytes = dbFile ? size(dbFile) + size(`${dbFile}-wal`) : undefined;
  return { rss, heapUsed, heapTotal, external, arrayBuffers, ...(dbBytes !== undefined ? { dbBytes } : {}) };
}

function listen(app: Hono): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    s.once('error', reject);
  });
}

async function bare(): Promise<void> {
  // The least a hono app on @hono/node-server can do: route, build a small JSON response.
  const app = new Hono();
  app.get('/ping', (c) => c.json({ ok: true, version: '0.0.0' }));
  app.post('/echo', async (c) => c.json({ ok: true, got: Object.keys(await c.req.json()).length }));

  // The floor for "create → SSE": parse the body, commit one row to SQLite (WAL,
  // synchronous=NORMAL, the relay's schema through its store), announce it to every SSE
  // client through hono's streamSSE, answer 201. No auth, no validation, no relay.
  const dir = mkdtempSync(join(tmpdir(), 'askrelay-bench-floor-'));
  const store = new SqliteStore(join(dir, DB_FILE));
  const subscribers = new Set<(chunk: string) => void>();
  let serial = 0;
  app.post('/floor', async (c) => {
    const body = (await c.req.json()) as Record<string, unknown>;
    const now = Date.now();
    const card = {
      ...body,
      id: `f_${serial++}`,
      sessionId: null,
      status: 'pending',
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + 3_600_000).toISOString(),
    } as unknown as Card;
    store.insertCard(card);
    const chunk = `event: card.created\ndata: ${JSON.stringify(card)}\n\n`;
    subscribers.forEach((push) => push(chunk));
    return c.json(card, 201);
  });
  app.get('/events', (c) =>
    streamSSE(c, async (stream) => {
      const queue: string[] = [];
      let wake: (() => void) | undefined;
      const push = (chunk: string) => {
        queue.push(chunk);
        wake?.();
      };
      subscribers.add(push);
      let open = true;
      stream.onAbort(() => {
        open = false;
        wake?.();
      });
      try {
        await stream.write(': connected\n\n');
        while (open) {
          if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
          wake = undefined;
          if (queue.length) await stream.write(queue.splice(0).join(''));
        }
      } finally {
        subscribers.delete(push);
      }
    }),
  );
  const server = await listen(app);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  send({ ok: true, url: `http://127.0.0.1:${port}/` });
  process.on('message', (msg: ChildRequest) => {
    if (msg.cmd === 'exit') {
      (server as http.Server).closeAllConnections();
      server.close(() => {
        store.close();
        rmSync(dir, { recursive: true, force: true });
        process.exit(0);
      });
    } else if (msg.cmd === 'serverTimes') {
      send({ ok: true, times: { ...serverTimes }, cpu: process.cpuUsage() });
      if (msg.reset) for (const key of Object.keys(serverTimes)) delete serverTimes[key];
    } else send({ ok: false, error: `bare server has no "${msg.cmd}"` });
  });
}

async function relay(dataDir: string): Promise<void> {
  // Diagnosis only: the push sender logs every push it drops or gives up on (console.warn).
  if (process.env.BENCH_PUSH_SILENT) console.warn = () => {};
  // BENCH_RELAY_ENV: more settings for this relay as JSON (the channel benchmark's chat platforms).
  const extra = JSON.parse(process.env.BENCH_RELAY_ENV ?? '{}') as Record<string, string>;
  const config = serveConfig({ port: '0', data: dataDir }, { ASKRELAY_TOKEN: 'bench-token-0123456789abcdef', ...extra });
  let running: RunningRelay = await startRelay(config);
  let serial = 0;
  send({ ok: true, url: running.url, token: running.token });

  const handle = async (msg: ChildRequest): Promise<ChildReply> => {
    switch (msg.cmd) {
      case 'fill': {
        // Straight through the relay core (no HTTP): the same create() the API route calls,
        // with the same validation, store insert, deadline and event.
        const start = performance.now();
        while (running.relay.pendingCount < msg.pending) await running.relay.create(benchDraft(`fill ${serial++}`));
        return { ok: true, pending: running.relay.pendingCount, ms: performance.now() - start };
      }
      case 'make': {
        const ids: string[] = [];
        for (let i = 0; i < msg.cards; i++) ids.push((await running.relay.create(benchDraft(`make ${serial++}`))).id);
        return { ok: true, ids };
      }
      case 'heapSnapshot':
        gcNow();
        writeHeapSnapshot(msg.file);
        return { ok: true, waiting: running.relay.waitedOn };
      case 'waiting':
        return { ok: true, waiting: running.relay.waitedOn };
      case 'warm': {
        // Runs create and answer through every code path once, then leaves nothing pending,
        // so the memory baseline already holds compiled code, prepared statements and caches.
        const start = performance.now();
        for (let i = 0; i < msg.cards; i++) {
          const card = await running.relay.create(benchDraft(`warm ${serial++}`));
          await running.relay.answer(card.id, BENCH_ANSWER);
        }
        return { ok: true, pending: running.relay.pendingCount, ms: performance.now() - start };
      }
      case 'mem':
        return { ok: true, memory: memory(join(config.dataDir, DB_FILE)) };
      case 'serverTimes': {
        const times = { ...serverTimes };
        if (msg.reset) for (const key of Object.keys(serverTimes)) delete serverTimes[key];
        return { ok: true, times, cpu: process.cpuUsage() };
      }
      case 'restart': {
        await running.close();
        if (msg.makeOverdue) {
          // Pretend the relay was down past every deadline: the start must expire them all.
          const db = new Database(join(config.dataDir, DB_FILE));
          db.prepare(`UPDATE cards SET expires_at = created_at + 1 WHERE status = 'pending'`).run();
          db.close();
        }
        const start = performance.now();
        running = await startRelay(config);
        const ms = performance.now() - start;
        return { ok: true, ms, url: running.url, recovered: running.recovered };
      }
      case 'encryptCost': {
        // What one card costs the relay's main thread when every subscription gets its push:
        // web-push's encrypt (an ECDH key pair, ECDH, HKDF, AES-128-GCM) once per subscription,
        // exactly as PushSender encrypts (its VAPID header is signed once per push service).
        const subs = Array.from({ length: msg.subscriptions }, (_, i) => {
          const ecdh = createECDH('prime256v1');
          ecdh.generateKeys();
          return { endpoint: `https://push.example/${i}`, keys: { p256dh: ecdh.getPublicKey('base64url'), auth: randomBytes(16).toString('base64url') } };
        });
        const card = await running.relay.create(benchDraft(`encrypt ${serial++}`));
        await running.relay.answer(card.id, BENCH_ANSWER);
        const payload = JSON.stringify(cardPayload(card));
        const msPerRound: number[] = [];
        for (let r = 0; r < msg.rounds; r++) {
          const start = performance.now();
          for (const sub of subs) {
            webpush.encrypt(sub.keys.p256dh, sub.keys.auth, payload, 'aes128gcm');
          }
          msPerRound.push(performance.now() - start);
        }
        // The same pushes through the sender's worker (PushEncryptor): the main thread's busy
        // time (event loop utilisation) while they are encrypted.
        const encryptor = new PushEncryptor(() => {
          throw new Error('the bench expects the worker');
        }, console.warn);
        const mainMsPerRound: number[] = [];
        for (let r = 0; r < msg.rounds + 1; r++) {
          const before = performance.eventLoopUtilization();
          await Promise.all(subs.map((sub) => encryptor.encrypt({ p256dh: sub.keys.p256dh, auth: sub.keys.auth, json: payload })));
          const used = performance.eventLoopUtilization(before);
          if (r > 0) mainMsPerRound.push(used.active); // the first round starts the worker
        }
        encryptor.stop();
        return { ok: true, msPerRound, mainMsPerRound };
      }
      case 'exit':
        await running.close();
        process.exit(0);
      default:
        return { ok: false, error: `relay has no "${msg.cmd}"` };
    }
  };

  process.on('message', (msg: ChildRequest) => {
    handle(msg).then(send, (err: unknown) => send({ ok: false, error: String((err as Error)?.stack ?? err) }));
  });
}

/**
 * A push service that misbehaves. `hang`: accepts every connection, reads what arrives and
 * never answers (the relay's request waits for its timeout). `fail`: answers every push at
 * once with 503 (the relay retries it with backoff).
 */
async function pushSink(behaviour: 'hang' | 'fail'): Promise<void> {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  let requests = 0;
  const track = (socket: net.Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  };
  let server: net.Server;
  if (behaviour === 'hang') {
    server = net.createServer((socket) => {
      track(socket);
      socket.on('data', (chunk: Buffer) => {
        // Count request heads; the bodies are read and ignored.
        requests += chunk.toString('latin1').split('HTTP/1.1\r\n').length - 1;
      });
    });
  } else {
    server = http.createServer((req, res) => {
      requests++;
      req.resume();
      req.on('end', () => res.writeHead(503, { 'retry-after': '1' }).end());
    });
    server.on('connection', track);
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  send({ ok: true, url: `http://127.0.0.1:${address.port}/` });
  process.on('message', (msg: ChildRequest) => {
    if (msg.cmd === 'sinkStats') send({ ok: true, sink: { connections, requests, open: sockets.size } });
    else if (msg.cmd === 'dropConnections') {
      // Between benchmark blocks: the relay's hung requests fail now instead of at their timeout.
      sockets.forEach((s) => s.destroy());
      send({ ok: true, sink: { connections, requests, open: 0 } });
    }
    else if (msg.cmd === 'exit') {
      sockets.forEach((s) => s.destroy());
      server.close(() => process.exit(0));
    } else send({ ok: false, error: `push sink has no "${msg.cmd}"` });
  });
}

const [mode, dataDir, url] = process.argv.slice(2);
if (mode === 'bare') await bare();
else if (mode === 'floor') await runFloor(dataDir, url, send);
else if (mode === 'relay' && dataDir) await relay(dataDir);
else if (mode === 'pushsink' && (dataDir === 'hang' || dataDir === 'fail')) await pushSink(dataDir);
else {
  console.error('usage: child.ts bare | relay <dataDir> | floor sqlite | floor postgres <url> | pushsink hang|fail');
  process.exit(2);
}
