// The floor the relay is measured against (issue 20): the same routes and the same work a
// card's life needs, without any of the relay's logic. A bearer check, a JSON body, one
// insert to create, one compare-and-set update to answer, every SSE stream told, a long
// poll released (the stream written as the relay writes its own). No validation, no audit, no outbox, no delivery, no access rules.
//
//   node --import tsx bench/child.ts floor sqlite
//   node --import tsx bench/child.ts floor postgres <database url>
//
// On SQLite: better-sqlite3 in WAL with synchronous=NORMAL, as the relay runs it. On
// PostgreSQL: a pg pool of 10, each statement its own transaction (one WAL flush each).

import { serve, type HttpBindings, type ServerType } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import Database from 'better-sqlite3';
import { Hono } from 'hono';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildReply } from './child.js';

export const FLOOR_TOKEN = 'bench-token-0123456789abcdef';

interface Row {
  id: string;
  status: string;
  body: string;
  answer: string | null;
}

/** One insert, one compare-and-set, one read: the store work of a card's life. */
interface FloorStore {
  insert(row: Row): Promise<void>;
  /** true when this call moved the card from pending to answered. */
  answer(id: string, answer: string): Promise<boolean>;
  get(id: string): Promise<Row | undefined>;
  close(): Promise<void>;
}

const SCHEMA = 'CREATE TABLE cards (id TEXT PRIMARY KEY, status TEXT NOT NULL, body TEXT NOT NULL, answer TEXT, created_at BIGINT NOT NULL)';

function sqliteStore(): FloorStore {
  const dir = mkdtempSync(join(tmpdir(), 'askrelay-bench-floor-'));
  const db = new Database(join(dir, 'floor.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(SCHEMA);
  const insert = db.prepare('INSERT INTO cards (id, status, body, answer, created_at) VALUES (?, ?, ?, NULL, ?)');
  const cas = db.prepare(`UPDATE cards SET status = 'answered', answer = ? WHERE id = ? AND status = 'pending'`);
  const get = db.prepare('SELECT id, status, body, answer FROM cards WHERE id = ?');
  return {
    insert: async (row) => void insert.run(row.id, row.status, row.body, Date.now()),
    answer: async (id, answer) => cas.run(answer, id).changes === 1,
    get: async (id) => get.get(id) as Row | undefined,
    close: async () => {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function postgresStore(url: string): Promise<FloorStore> {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  await pool.query(SCHEMA.replace('CREATE TABLE', 'CREATE TABLE IF NOT EXISTS'));
  return {
    insert: async (row) => void (await pool.query('INSERT INTO cards (id, status, body, answer, created_at) VALUES ($1, $2, $3, NULL, $4)', [row.id, row.status, row.body, Date.now()])),
    answer: async (id, answer) => ((await pool.query(`UPDATE cards SET status = 'answered', answer = $1 WHERE id = $2 AND status = 'pending'`, [answer, id])).rowCount ?? 0) === 1,
    get: async (id) => (await pool.query<Row>('SELECT id, status, body, answer FROM cards WHERE id = $1', [id])).rows[0],
    close: () => pool.end(),
  };
}

/** The card as the relay sends it: the stored body's fields beside id, status and answer. */
const cardJson = (row: Row) =>
  `{"id":"${row.id}","status":"${row.status}"${row.answer ? `,"answer":${row.answer}` : ''}${row.body.length > 2 ? `,${row.body.slice(1)}` : '}'}`;

function floorApp(store: FloorStore): Hono {
  const app = new Hono();
  const streams = new Set<(chunk: string) => void>();
  const waiters = new Map<string, Set<(json: string) => void>>();
  const tell = (event: string, json: string) => {
    const chunk = `event: ${event}\ndata: ${json}\n\n`;
    streams.forEach((push) => push(chunk));
  };
  const bearer = `Bearer ${FLOOR_TOKEN}`;

  app.get('/api/health', (c) => c.json({ ok: true }));
  app.use('/api/*', async (c, next) => {
    if (c.req.header('authorization') !== bearer) return c.json({ error: { code: 'unauthorized', message: 'no token' } }, 401);
    await next();
  });
  app.post('/api/cards', async (c) => {
    const body = JSON.stringify(await c.req.json());
    const row: Row = { id: `f_${randomUUID()}`, status: 'pending', body, answer: null };
    await store.insert(row);
    const json = cardJson(row);
    tell('card.created', json);
    return c.body(json, 201, { 'content-type': 'application/json' });
  });
  app.post('/api/cards/:id/answer', async (c) => {
    const id = c.req.param('id');
    const answer = JSON.stringify(((await c.req.json()) as { answers: unknown }).answers);
    const won = await store.answer(id, answer);
    const row = await store.get(id);
    if (!row) return c.json({ error: { code: 'not_found', message: 'no such card' } }, 404);
    const json = cardJson(row);
    if (won) {
      tell('card.updated', json);
      waiters.get(id)?.forEach((release) => release(json));
      waiters.delete(id);
    } else if (row.answer !== answer) return c.json({ error: { code: 'conflict', message: 'answered already' } }, 409);
    return c.body(json, 200, { 'content-type': 'application/json' });
  });
  app.get('/api/cards/:id/wait', async (c) => {
    const id = c.req.param('id');
    const seconds = Number(c.req.query('timeout') ?? 30);
    // In place before the read: an answer committed while the read is on its way (a
    // networked store) still finds the waiter.
    const set = waiters.get(id) ?? new Set<(json: string) => void>();
    waiters.set(id, set);
    let release!: (json: string | undefined) => void;
    const released = new Promise<string | undefined>((resolve) => (release = resolve));
    const timer = setTimeout(() => release(undefined), seconds * 1000);
    set.add(release);
    const done = () => {
      clearTimeout(timer);
      set.delete(release);
    };
    const row = await store.get(id);
    if (!row || row.status !== 'pending') {
      done();
      if (!row) return c.json({ error: { code: 'not_found', message: 'no such card' } }, 404);
      return c.body(cardJson(row), 200, { 'content-type': 'application/json' });
    }
    const json = await released;
    done();
    return json === undefined ? c.body(null, 204) : c.body(json, 200, { 'content-type': 'application/json' });
  });
  // Straight to Node's response, as the relay's own event stream writes (no web stream in between).
  app.get('/api/events', (c) => {
    const res = (c.env as HttpBindings).outgoing;
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.write('retry: 1000\n: connected\n\n');
    const push = (chunk: string) => void res.write(chunk);
    streams.add(push);
    res.on('close', () => streams.delete(push));
    return RESPONSE_ALREADY_SENT;
  });
  return app;
}

/** Runs the floor in this (child) process, answering the parent's IPC like the relay child. */
export async function runFloor(kind: string | undefined, url: string | undefined, send: (reply: ChildReply) => void): Promise<void> {
  if (kind !== 'sqlite' && !(kind === 'postgres' && url)) throw new Error('usage: child.ts floor sqlite | floor postgres <database url>');
  const store = kind === 'sqlite' ? sqliteStore() : await postgresStore(url!);
  const app = floorApp(store);
  const server = await new Promise<ServerType>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  send({ ok: true, url: `http://127.0.0.1:${port}/`, token: FLOOR_TOKEN });
  process.on('message', (msg: { cmd: string }) => {
    if (msg.cmd === 'serverTimes') send({ ok: true, times: {}, cpu: process.cpuUsage() });
    else if (msg.cmd === 'exit') {
      (server as http.Server).closeAllConnections();
      server.close(() => void store.close().then(() => process.exit(0)));
    } else send({ ok: false, error: `the floor has no "${msg.cmd}"` });
  });
}
