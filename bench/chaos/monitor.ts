import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../test/support/cli.js';
import type { Card } from '../../src/cards/model.js';
import type { ChaosCluster } from './cluster.js';
import type { FinalState, Recorder } from './history.js';
import { closingOf, pause } from './workload.js';

// The run's own eyes on the database: all along, the pending cards past their deadline plus
// the lease; at the end, every card, the audit log, and `askrelay audit verify`.

/** Every 2 s, the pending cards seen past their deadline plus the lease (none, if all is well). */
export async function watchOverdue(cluster: ChaosCluster, recorder: Recorder, leaseMs: number, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    // The time the read began: a read held up by a lock sees the cards as they are later,
    // so a card it finds pending was pending at least until then.
    const seenAt = Date.now();
    try {
      const { rows } = await cluster.db.query<{ id: string; expires_at: string }>("SELECT id, expires_at FROM cards WHERE status = 'pending' AND expires_at < $1", [seenAt - leaseMs]);
      for (const row of rows) recorder.overdue({ cardId: row.id, expiresAt: Number(row.expires_at), seenAt });
    } catch {
      // The database slowed past the statement timeout: the next look will tell.
    }
    await pause(2_000, signal);
  }
}

async function readCards(cluster: ChaosCluster): Promise<FinalState['cards']> {
  const { rows } = await cluster.db.query<{ id: string; expires_at: string; data: string }>('SELECT id, expires_at, data FROM cards');
  return rows.map((row) => {
    const card = JSON.parse(row.data) as Card;
    const closing = closingOf(card);
    return { id: row.id, status: card.status, ...(closing?.labels ? { labels: closing.labels } : {}), expiresAt: Number(row.expires_at), text: card.questions.map((q) => q.text).join('\n') };
  });
}

async function readAudit(cluster: ChaosCluster): Promise<FinalState['audit']> {
  const { rows } = await cluster.db.query<{ data: string }>('SELECT data FROM audit ORDER BY seq');
  return rows.map((row) => {
    const entry = JSON.parse(row.data) as { event: string; cardId?: string };
    return { event: entry.event, ...(entry.cardId ? { cardId: entry.cardId } : {}) };
  });
}

/** Whether every card has its created entry and, closed, its closing one. */
function audited(cards: FinalState['cards'], audit: FinalState['audit']): boolean {
  const events = new Set(audit.map((e) => `${e.cardId} ${e.event}`));
  return cards.every((c) => events.has(`${c.id} card.created`) && (c.status === 'pending' || events.has(`${c.id} card.${c.status}`)));
}

/** `askrelay audit verify --json` through the balancer, as an operator runs it. */
async function verify(cluster: ChaosCluster): Promise<FinalState['verify']> {
  const cwd = mkdtempSync(join(tmpdir(), 'askrelay-chaos-verify-'));
  try {
    const { code, stdout, stderr } = await runCli(['audit', 'verify', '--json', '--url', cluster.url], { ASKRELAY_TOKEN: cluster.token }, cwd);
    try {
      return JSON.parse(stdout) as FinalState['verify'];
    } catch {
      return { error: `exit ${code}: ${stderr.trim() || stdout.trim()}` };
    }
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

/**
 * The database once the run is over. A node writes a change's audit entry just after the
 * change, so the entries of the last changes are given up to `settleMs` to arrive.
 */
export async function finalState(cluster: ChaosCluster, settleMs: number): Promise<FinalState> {
  const end = Date.now() + settleMs;
  for (;;) {
    // As with watchOverdue: the cards are as they were at least until the read began.
    const at = Date.now();
    const cards = await readCards(cluster);
    const audit = await readAudit(cluster);
    if (audited(cards, audit) || Date.now() >= end) return { at, cards, audit, verify: await verify(cluster) };
    await new Promise((r) => setTimeout(r, 500));
  }
}
