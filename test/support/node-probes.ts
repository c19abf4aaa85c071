import pg from 'pg';
import { expect } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { CHANNEL } from '../../src/store/postgres/event-bus.js';
import type { RelayNodes } from './relay-nodes.js';
import { readSse } from './sse.js';

// What the cross-node tests look at on running relay nodes (test/support/relay-nodes.ts):
// each node's event stream, its audit log and node list, and the order in which PostgreSQL
// hands out the nodes' announcements.

/** The body of a response with the expected status; otherwise a failure naming the body and every node's output. */
export async function bodyOf<T>(cluster: RelayNodes, res: Response, status = 200): Promise<T> {
  const body = await res.text();
  expect(res.status, `${res.url}: ${body}\n${cluster.describe()}`).toBe(status);
  return JSON.parse(body) as T;
}

export interface Heard {
  event: string;
  card: Card;
  /** When the test read it. */
  at: number;
}

export interface CardWatch {
  node: number;
  /** The card events in the order the node sent them. */
  heard: Heard[];
  of(id: string): Heard[];
  close(): void;
}

/** Node `node`'s SSE stream (GET /api/events), its card events collected until close(). */
export async function watchCards(cluster: RelayNodes, node: number): Promise<CardWatch> {
  const controller = new AbortController();
  const res = await cluster.api(node, '/api/events', { signal: controller.signal });
  expect(res.status).toBe(200);
  const heard: Heard[] = [];
  void (async () => {
    try {
      for await (const e of readSse(res)) if (e.event.startsWith('card.')) heard.push({ event: e.event, card: JSON.parse(e.data) as Card, at: Date.now() });
    } catch {
      // closed, or the node was killed
    }
  })();
  return { node, heard, of: (id) => heard.filter((h) => h.card.id === id), close: () => controller.abort() };
}

interface AuditEntry {
  event: string;
  cardId?: string;
}

/**
 * The audit entries `event` of one card. Each node writes its entries in the background and
 * flushes them when its log is read: reading through every node that may have written some
 * makes the last read see them all.
 */
export async function auditEntries(cluster: RelayNodes, nodes: number[], cardId: string, event: string): Promise<AuditEntry[]> {
  let entries: AuditEntry[] = [];
  for (const node of nodes) entries = (await bodyOf<{ entries: AuditEntry[] }>(cluster, await cluster.api(node, '/api/audit?limit=10000'))).entries;
  return entries.filter((e) => e.cardId === cardId && e.event === event);
}

export interface NodeRow {
  id: string;
  heartbeatAt: string;
  holds: Record<string, number>;
  leases: string[];
}

/** GET /api/nodes on node `node`. */
export const listNodes = async (cluster: RelayNodes, node: number) => (await bodyOf<{ nodes: NodeRow[] }>(cluster, await cluster.api(node, '/api/nodes'))).nodes;

/** The listed nodes holding `lease`. */
export const leaseHolders = (rows: NodeRow[], lease: string) => rows.filter((n) => n.leases.includes(lease)).map((n) => n.id);

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * (sorted.length - 1)))];
}

/** Resolves with what `promise` gives, or fails saying what did not happen within `ms`. */
export function within<T>(promise: Promise<T>, what: string, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

export interface AnnouncementOrder {
  /** In the order PostgreSQL handed them out: "<event> <card id>" for the nodes' events, the marker text for markers. */
  heard: string[];
  /** Sends a marker, committed after everything committed before this call. */
  mark(text: string): Promise<void>;
  end(): Promise<void>;
}

/**
 * Listens to the nodes' announcements (the event bus channel) next to a marker channel of
 * the test's own. PostgreSQL hands a listener the notifications of every channel in the
 * order their transactions committed, so a marker sent after a call returned comes after
 * every announcement the node committed before returning.
 */
export async function announcementOrder(databaseUrl: string): Promise<AnnouncementOrder> {
  const MARKER = 'askrelay_test_marker';
  const listener = new pg.Client({ connectionString: databaseUrl });
  const marker = new pg.Client({ connectionString: databaseUrl });
  await Promise.all([listener.connect(), marker.connect()]);
  const heard: string[] = [];
  listener.on('notification', ({ channel, payload = '' }) => {
    if (channel === MARKER) return void heard.push(payload);
    const { name, data, ref } = JSON.parse(payload) as { name: string; data?: { id?: string }; ref?: string };
    heard.push(`${name} ${data?.id ?? ref}`);
  });
  await listener.query(`LISTEN ${CHANNEL}; LISTEN ${MARKER}`);
  return {
    heard,
    mark: async (text) => void (await marker.query('SELECT pg_notify($1, $2)', [MARKER, text])),
    end: async () => void (await Promise.all([listener.end(), marker.end()])),
  };
}
