import { createHash, createHmac } from 'node:crypto';
import { z } from 'zod';

// The audit log's hash chain, as pure functions: how an entry is sealed and how a list of
// stored rows is checked. Each entry carries the hash of the one before it.
//
// Entries written before the relay had an audit key are sealed with plain SHA-256, which
// anyone who can write the database can recompute. Since the key (kept outside the
// database: <data>/audit.key or ASKRELAY_AUDIT_KEY), every entry is sealed with
// HMAC-SHA256 under it and says so (`alg`, and `keyId`, which names the key without
// revealing it). Unkeyed entries are accepted only before the first keyed one: once keyed,
// an unkeyed entry is a downgrade, and so is a log whose last entry is unkeyed while the
// relay has a key (a keyed relay records the switch as soon as it opens an older log).
// A log cut short and given a matching head is still a genuine chain: only a head pinned
// elsewhere (`askrelay audit head`) finds that.

export const AuditEventSchema = z.enum([
  'card.created',
  'card.answered',
  'card.skipped',
  'card.expired',
  'card.cancelled',
  /** The human answered a card after it expired or was cancelled. */
  'card.late_answer',
  /** A routed card still pending reached an escalation step (docs/routing.md). */
  'card.escalated',
  'card.refused',
  'session.permission',
  /** The relay keys the log from this entry on (its first start with an audit key, or a new key). */
  'audit.keyed',
]);

export const KEYED_ALG = 'hmac-sha256';

export const AuditEntrySchema = z.object({
  seq: z.number().int(),
  at: z.string(),
  event: AuditEventSchema,
  cardId: z.string().optional(),
  sessionId: z.string().nullable().optional(),
  actor: z.object({ kind: z.enum(['human', 'agent', 'system']), id: z.string() }),
  surface: z.string(),
  /** What was refused and why, the answer's shape, a setting's new value… */
  detail: z.record(z.string(), z.unknown()).optional(),
  prevHash: z.string(),
  /** Absent: the hash is plain SHA-256 (an entry from before the relay had a key). */
  alg: z.literal(KEYED_ALG).optional(),
  /** Which key sealed the entry (see auditKey), with alg. */
  keyId: z.string().optional(),
  hash: z.string(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;
export type AuditRecord = Omit<AuditEntry, 'seq' | 'prevHash' | 'hash' | 'alg' | 'keyId'>;

export const GENESIS = '0'.repeat(64);

export interface AuditKey {
  secret: Buffer;
  /** 16 hex digits naming the key in entries and messages; says nothing of the key itself. */
  id: string;
}

export function auditKey(secret: Buffer): AuditKey {
  return { secret, id: createHmac('sha256', secret).update('askrelay audit key id').digest('hex').slice(0, 16) };
}

/** The entry's fields in a fixed order; a keyed entry's marker and key id are covered too. */
function canonical(entry: Omit<AuditEntry, 'hash'>): string {
  const { seq, at, event, cardId, sessionId, actor, surface, detail, prevHash, alg, keyId } = entry;
  const fields = [seq, at, event, cardId ?? null, sessionId ?? null, actor.kind, actor.id, surface, detail ?? null, prevHash];
  return JSON.stringify(alg === undefined ? fields : [...fields, alg, keyId ?? null]);
}

/** The plain SHA-256 of an entry (how entries were sealed before the key). */
export function hashEntry(entry: Omit<AuditEntry, 'hash'>): string {
  return createHash('sha256').update(canonical(entry)).digest('hex');
}

/** The HMAC-SHA256 of an entry under the audit key. */
export function macEntry(entry: Omit<AuditEntry, 'hash'>, secret: Buffer): string {
  return createHmac('sha256', secret).update(canonical(entry)).digest('hex');
}

/** Seals an entry: keyed when there is a key, plain SHA-256 otherwise. */
export function sealEntry(base: Omit<AuditEntry, 'hash' | 'alg' | 'keyId'>, key?: AuditKey): AuditEntry {
  if (!key) return { ...base, hash: hashEntry(base) };
  const marked = { ...base, alg: KEYED_ALG, keyId: key.id } as const;
  return { ...marked, hash: macEntry(marked, key.secret) };
}

/**
 * Seals `records` in order after `head` (undefined: an empty log), each linked to the one
 * before: what every store appends, so the chain is the same whichever store holds it.
 */
export function sealAfter(head: AuditHead | undefined, records: AuditRecord[], key?: AuditKey): AuditEntry[] {
  let prev: AuditHead = head ?? { seq: 0, hash: GENESIS };
  return records.map((record) => (prev = sealEntry({ seq: prev.seq + 1, ...record, prevHash: prev.hash }, key)));
}

const SYSTEM = { kind: 'system' as const, id: 'relay' };

export interface KeyedSwitch {
  /** The `audit.keyed` entry to append. */
  record: AuditRecord;
  /** The sentence for the operator, once the entry is written. */
  notice(entry: AuditEntry): string;
}

/**
 * Opening a log with `key`: a log whose last entry (its stored JSON; undefined for an
 * empty log) is unkeyed, or keyed with another key, gets an `audit.keyed` entry under this
 * key at once. From there on every entry is keyed, and a keyed relay's log never ends on
 * an unkeyed entry (see checkChain). Undefined when there is nothing to record.
 */
export function keyedSwitch(lastData: string | undefined, key: AuditKey, now = new Date()): KeyedSwitch | undefined {
  if (lastData === undefined) return undefined;
  let last: Partial<AuditEntry> = {};
  try {
    last = JSON.parse(lastData) as AuditEntry;
  } catch {
    // A last row that is no entry (verify names it) is not keyed by this key either.
  }
  if (last.alg && last.keyId === key.id) return undefined;
  const previous = last.alg ? last.keyId : undefined;
  return {
    record: {
      at: now.toISOString(),
      event: 'audit.keyed',
      actor: SYSTEM,
      surface: 'relay',
      detail: { algorithm: 'hmac-sha256', keyId: key.id, ...(previous ? { previousKeyId: previous } : {}) },
    },
    notice: (entry) =>
      last.alg
        ? `The audit log's last entry was keyed with another key (${previous}), not this relay's (${key.id}); entries from ${entry.seq} on are keyed with this one, and "askrelay audit verify" reports the older keyed entries until their key is back.`
        : `The audit log is keyed from entry ${entry.seq} on; the ${entry.seq - 1} ${entry.seq === 2 ? 'entry' : 'entries'} before it stay plain SHA-256 and are checked as such.`,
  };
}

export interface AuditCheck {
  ok: boolean;
  entries: number;
  /** One sentence per problem found, e.g. "entry 12 was edited". */
  problems: string[];
}

/** A head pinned elsewhere: the log must still hold entry `seq` with this hash. */
export interface AuditHead {
  seq: number;
  hash: string;
}

export const HEAD_PIN = /^(\d{1,15}):([0-9a-f]{64})$/;

/** "SEQ:HASH" as `askrelay audit head` prints it, or undefined when it is not one. */
export function parseHead(text: string): AuditHead | undefined {
  const match = HEAD_PIN.exec(text.trim());
  return match ? { seq: Number(match[1]), hash: match[2] } : undefined;
}

export interface AuditRow {
  seq: number;
  data: string;
  prevHash: string;
  hash: string;
}

const range = (from: number, to: number) => (from === to ? `entry ${from} was` : `entries ${from}-${to} were`);

/** Checks the stored rows (in seq order) and head against the chain's rules. */
export function checkChain(rows: AuditRow[], head: AuditHead | undefined, key?: AuditKey, pin?: AuditHead): AuditCheck {
  const problems: string[] = [];
  // Consecutive entries sealed with a key this relay does not have make one problem.
  let foreign: { from: number; to: number; keyId?: string; at: number } | undefined;
  const foreignEntry = (seq: number, keyId: string | undefined) => {
    if (foreign && foreign.keyId === keyId && foreign.to === seq - 1) foreign.to = seq;
    else foreign = { from: seq, to: seq, keyId, at: problems.push('') - 1 };
    const { from, to } = foreign;
    problems[foreign.at] = key
      ? `${range(from, to)} keyed with another audit key (${keyId ?? 'none named'}), not this relay's (${key.id})`
      : `${from === to ? `entry ${from} is` : `entries ${from}-${to} are`} keyed, and this relay has no audit key to check them with`;
  };
  let prev = GENESIS;
  let expected = 1;
  let keyedFrom: number | undefined;
  let last: AuditEntry | undefined;
  for (const row of rows) {
    if (row.seq !== expected) {
      problems.push(row.seq - 1 === expected ? `entry ${expected} was removed` : `entries ${expected}-${row.seq - 1} were removed`);
    }
    let entry: AuditEntry | undefined;
    try {
      entry = AuditEntrySchema.parse(JSON.parse(row.data));
    } catch {
      problems.push(`entry ${row.seq} is not a valid entry`);
    }
    last = entry;
    if (entry) {
      const { hash: _stored, ...fields } = entry;
      const moved = entry.seq !== row.seq || entry.prevHash !== row.prevHash || entry.hash !== row.hash;
      if (entry.alg === undefined) {
        if (keyedFrom !== undefined) problems.push(`entry ${row.seq} is not keyed`);
        else if (moved || hashEntry(fields) !== row.hash) problems.push(`entry ${row.seq} was edited`);
      } else {
        keyedFrom ??= row.seq;
        if (!key || entry.keyId !== key.id) foreignEntry(row.seq, entry.keyId);
        else if (moved || macEntry(fields, key.secret) !== row.hash) problems.push(`entry ${row.seq} was edited`);
      }
    }
    if (row.prevHash !== prev && row.seq === expected) problems.push(`entry ${row.seq} does not follow entry ${row.seq - 1}`);
    prev = row.hash;
    expected = row.seq + 1;
  }
  const end = rows.at(-1);
  if (key && last && keyedFrom === undefined) {
    problems.push(`entry ${last.seq} is not keyed, though this relay keys every entry it writes: keyed entries after it were removed or rewritten`);
  }
  if (head && (!end || head.seq !== end.seq || head.hash !== end.hash)) {
    problems.push(head.seq > (end?.seq ?? 0) ? `entries after ${end?.seq ?? 0} (up to ${head.seq}) were removed` : 'the log head was edited');
  }
  if (!head && rows.length) problems.push('the log head was removed');
  if (pin) problems.push(...checkPin(rows, pin));
  return { ok: problems.length === 0, entries: rows.length, problems };
}

/** The log must still hold the pinned entry, with the pinned hash. */
function checkPin(rows: AuditRow[], pin: AuditHead): string[] {
  if (pin.seq === 0) return pin.hash === GENESIS ? [] : [`the pinned head (entry 0) can only be ${GENESIS}`];
  const row = rows.find((r) => r.seq === pin.seq);
  const end = rows.at(-1)?.seq ?? 0;
  if (!row) {
    return [pin.seq > end ? `the log ends at entry ${end}, before the pinned head (entry ${pin.seq}): entries were removed` : `the pinned head (entry ${pin.seq}) was removed`];
  }
  if (row.hash !== pin.hash) {
    return [`entry ${pin.seq} is not the pinned head (its hash is ${row.hash.slice(0, 16)}…, the pin's ${pin.hash.slice(0, 16)}…): the log was rewritten`];
  }
  return [];
}
