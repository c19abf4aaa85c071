// What a chaos run saw, as plain data: the faults it made, the cards its agents asked and
// what each waiter got, the answers people gave and how the relay took them, every error a
// client saw, and the pending cards seen past their deadline. The checker (invariants.ts)
// and the table (table.ts) read only this, so both are tested without a cluster.

export const FAULT_KINDS = ['sigkill', 'sigstop', 'terminate', 'read-only', 'slow-db'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRecord {
  kind: FaultKind;
  /** The node it hit; none for the database as a whole. */
  node?: number;
  at: number;
  /** When the fault itself was over (the node restarted or thawed, the lock released, the folder writable). */
  endedAt: number;
  /** sigkill: from the kill, sigstop: from the thaw, until the node answered /api/health 200; missing: never. */
  healthyAfterMs?: number;
  detail: string;
  /** Set when the fault could not be made (the run then says so instead of counting it). */
  failed?: string;
}

export type WaiterKind = 'poll' | 'stream' | 'mcp';
export type Outcome = 'answered' | 'skipped' | 'expired' | 'cancelled';

/** A closed card as a waiter or the database tells it: its status and, answered, the labels picked. */
export interface Closing {
  outcome: Outcome;
  labels?: string[];
}

/** A card an agent asked: a POST answered 201 (poll, stream), or an ask_user call (mcp). */
export interface Ask {
  /** Unique text in the card's question, by which the checker finds the card. */
  tag: string;
  via: WaiterKind;
  cardId?: string;
  at: number;
  /** What the waiter was finally handed, and when; missing: nothing before it gave up. */
  got?: Closing & { at: number };
}

export interface AnswerRecord {
  cardId: string;
  person: string;
  action: 'answer' | 'skip';
  labels: string[];
  /** The relay's final reply to it (after retries): 200, 409, 410, …; 0: no reply at all. */
  status: number;
  at: number;
}

export interface ClientError {
  at: number;
  client: string;
  what: string;
  /**
   * no-reply: the connection closed or the client gave up before a reply; http: a 5xx;
   * stream: an event stream ended; mcp: an MCP call failed or was cut off.
   */
  cause: 'no-reply' | 'http' | 'stream' | 'mcp';
  /** The request, with ids as :id ("GET /api/cards/:id/wait"). */
  route?: string;
  status?: number;
  /** The relay's error code; none when the reply was not the relay's (the balancer's own 503). */
  code?: string;
}

export interface Sighting {
  cardId: string;
  expiresAt: number;
  seenAt: number;
}

export interface History {
  seed: number;
  startedAt: number;
  endedAt: number;
  faults: FaultRecord[];
  asks: Ask[];
  answers: AnswerRecord[];
  errors: ClientError[];
  /** Pending cards seen by the monitor past their deadline plus the lease. */
  overdue: Sighting[];
  /** Requests that took long, by when they were sent: the stalls a freeze or a lock makes. */
  slow: { at: number; ms: number }[];
  /** Operations by name: requests sent, streams opened, calls made. */
  counts: Record<string, number>;
}

/** The database at the end: every card, the audit log, and what `askrelay audit verify` said. */
export interface FinalState {
  at: number;
  cards: { id: string; status: Outcome | 'pending'; labels?: string[]; expiresAt: number; text: string }[];
  audit: { event: string; cardId?: string }[];
  verify: { ok: boolean; entries: number; problems: string[] } | { error: string };
}

/** Requests slower than this are kept as stalls. */
export const SLOW_MS = 1_000;

/** Collects a run's history as it happens. */
export class Recorder {
  readonly history: History;

  constructor(seed: number, now = Date.now()) {
    this.history = { seed, startedAt: now, endedAt: now, faults: [], asks: [], answers: [], errors: [], overdue: [], slow: [], counts: {} };
  }

  count(name: string, n = 1): void {
    this.history.counts[name] = (this.history.counts[name] ?? 0) + n;
  }

  error(client: string, what: string, details: Pick<ClientError, 'cause' | 'route' | 'status' | 'code'>, at = Date.now()): void {
    this.history.errors.push({ at, client, what, ...details });
  }

  took(at: number, ms: number): void {
    if (ms >= SLOW_MS) this.history.slow.push({ at, ms });
  }

  ask(ask: Ask): Ask {
    this.history.asks.push(ask);
    return ask;
  }

  answer(record: AnswerRecord): void {
    this.history.answers.push(record);
  }

  fault(record: FaultRecord): void {
    this.history.faults.push(record);
  }

  overdue(sighting: Sighting): void {
    this.history.overdue.push(sighting);
  }
}
