import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Card } from '../src/cards/model.js';
import type { Stores } from '../src/store/stores.js';
import { sqliteStores } from '../src/store/stores.js';
import { postgresStores } from '../src/store/postgres/postgres-stores.js';
import { auditCoverage } from './support/audit-coverage.js';
import { diesWithTest } from './support/child-guard.js';
import { freshDatabase, type FreshDatabase } from './support/postgres.js';

// A relay killed with SIGKILL in the middle of a stream of changes (cards made, answered,
// skipped, expiring), again and again at random moments, then started once more: the audit
// log verifies, every card has exactly the entries of its changes and every entry its change,
// and nothing acknowledged is lost. On both stores.

const BIN = fileURLToPath(new URL('../bin/askrelay.js', import.meta.url));
const TOKEN = 'crash-audit-token-0123456789abcdef';
const KEY = 'crash-audit-key-0123456789abcdefgh';
const ROUNDS = 6;
const scratch = mkdtempSync(join(tmpdir(), 'askrelay-crash-audit-'));
const children: ChildProcessWithoutNullStreams[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
});

/** A small seeded generator: a failing run names its seed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

async function serve(data: string, database?: string): Promise<{ url: string; child: ChildProcessWithoutNullStreams; exited: Promise<unknown> }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ASKRELAY_')));
  const [command, args] = diesWithTest(process.execPath, [BIN, 'serve', '--port', '0', '--data', data, ...(database ? ['--database', database] : [])]);
  const child = spawn(command, args, { env: { ...clean, ASKRELAY_TOKEN: TOKEN, ASKRELAY_AUDIT_KEY: KEY, ASKRELAY_LOG: 'warn', ASKRELAY_NODE_ID: 'crash' } });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const exited = new Promise((r) => child.on('exit', r));
  for (let i = 0; i < 1200; i++) {
    const url = /askrelay is running: (http:\/\/\S+)/.exec(out)?.[1];
    if (url && out.includes('press Ctrl+C')) return { url, child, exited };
    if (child.exitCode !== null) throw new Error(`serve exited: ${out}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`serve did not start: ${out}`);
}

const call = (url: string, path: string, json?: unknown) =>
  fetch(new URL(path, url), { method: json === undefined ? 'GET' : 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, ...(json === undefined ? {} : { body: JSON.stringify(json) }) });

/** What the clients were told: cards acknowledged as made, and answers acknowledged as the card's. */
interface Acks {
  created: Set<string>;
  answered: Map<string, string>;
}

/** One client: makes cards and closes most of them, until its relay is gone. */
async function client(url: string, acks: Acks, rnd: () => number, n: number): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      const made = await call(url, '/api/cards', { title: `client ${n} card ${i}`, questions: [{ text: `Go on (${n}.${i})?` }], waitSeconds: rnd() < 0.3 ? 1 : 3600 });
      if (made.status !== 201) throw new Error(`create: ${made.status} ${await made.text()}`);
      const { id } = (await made.json()) as Card;
      acks.created.add(id);
      const roll = rnd();
      if (roll < 0.5) {
        const text = `yes ${n}.${i}`;
        const res = await call(url, `/api/cards/${id}/answer`, { answers: { q1: { selected: [], text } } });
        if (res.status === 200) acks.answered.set(id, text);
        else if (res.status !== 410) throw new Error(`answer: ${res.status} ${await res.text()}`);
      } else if (roll < 0.7) {
        await call(url, `/api/cards/${id}/skip`, {});
      }
    } catch (err) {
      if (err instanceof TypeError) return; // the relay was killed: fetch failed
      throw err;
    }
  }
}

async function readBack(stores: Stores): Promise<{ cards: Card[]; problems: string[]; verified: Awaited<ReturnType<Stores['audit']['verify']>> }> {
  const cards = await stores.cards.listCards();
  const entries = [];
  for (let after = 0; ; ) {
    const page = await stores.audit.list(after, 1000);
    if (!page.length) break;
    entries.push(...page);
    after = page.at(-1)!.seq;
  }
  return { cards, problems: auditCoverage(cards, entries), verified: await stores.audit.verify() };
}

describe('changes and their audit entries across SIGKILLs', { timeout: 120_000 }, () => {
  for (const store of ['sqlite', 'postgres'] as const) {
    it(`${store}: killed ${ROUNDS} times mid-stream, no change lacks its entry and no entry its change`, async () => {
      const seed = Number(process.env.CRASH_SEED ?? Date.now() % 1_000_000);
      const rnd = random(seed);
      const data = mkdtempSync(join(scratch, `${store}-`));
      let db: FreshDatabase | undefined;
      if (store === 'postgres') db = await freshDatabase();
      const acks: Acks = { created: new Set(), answered: new Map() };
      try {
        for (let round = 0; round < ROUNDS; round++) {
          const relay = await serve(data, db?.url);
          const clients = Array.from({ length: 6 }, (_, n) => client(relay.url, acks, rnd, round * 10 + n));
          await new Promise((r) => setTimeout(r, 40 + rnd() * 300));
          relay.child.kill('SIGKILL');
          await relay.exited;
          await Promise.all(clients);
        }
        // Started once more: it expires what ran out, and stops cleanly.
        const last = await serve(data, db?.url);
        last.child.kill('SIGTERM');
        await last.exited;

        const stores = db ? await postgresStores(db.url, Buffer.from(KEY), () => {}) : sqliteStores(data, Buffer.from(KEY));
        try {
          const { cards, problems, verified } = await readBack(stores);
          const context = `seed ${seed}, ${cards.length} cards`;
          expect(acks.created.size, context).toBeGreaterThan(ROUNDS);
          expect(verified, context).toMatchObject({ ok: true, problems: [] });
          expect(problems, context).toEqual([]);
          const byId = new Map(cards.map((c) => [c.id, c]));
          expect([...acks.created].filter((id) => !byId.has(id)), `acknowledged cards lost (${context})`).toEqual([]);
          const wrong = [...acks.answered].filter(([id, text]) => byId.get(id)?.answer?.q1?.text !== text);
          expect(wrong, `acknowledged answers that are not the card's (${context})`).toEqual([]);
        } finally {
          await stores.close();
        }
      } finally {
        await db?.drop();
      }
    });
  }
});
