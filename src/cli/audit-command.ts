import { parseArgs } from 'node:util';
import { parseHead, type AuditHead } from '../store/audit-chain.js';
import type { AuditCheck, AuditEntry } from '../store/audit-store.js';
import { RelayClient, findRelay } from './client.js';
import { CLIENT_ENV_HELP, UsageError, parseFlags } from './flags.js';
import { table } from './format.js';

// askrelay audit [head|verify]: the relay's audit log from a terminal. The log pages
// through GET /api/audit (oldest first, `after` = the last seq seen) until the relay sends
// no `next`; head asks GET /api/audit/head for the last entry to pin elsewhere; verify asks
// GET /api/audit/verify to check the hash chain (and a pinned head). All are the human's
// only: an agent token gets the relay's 403 message.

export const AUDIT_HELP = `askrelay audit — the relay's audit log: who did what to which card, and its check

Usage: askrelay audit [--after SEQ] [--jsonl] [--url URL]
       askrelay audit head [--json] [--url URL]
       askrelay audit verify [--head SEQ:HASH] [--json] [--url URL]

Without a subcommand, prints every entry of the audit log, oldest first, one row each:
  SEQ, TIME (UTC)
  EVENT     card.created, card.answered, card.skipped, card.expired, card.cancelled,
            card.refused (an attempt the access rules refused), session.permission,
            audit.keyed (the log is keyed with the relay's audit key from here on)
  CARD      the card's id ("-" for a session's setting and audit.keyed)
  ACTOR     human:operator, agent:<session id>, system:relay
  SURFACE   web, cli, api, relay-tool, …
  DETAIL    what was refused and why, a setting's new value, …

  --after SEQ   only the entries after sequence number SEQ (to follow up on a run)
  --jsonl       one JSON entry per line, exactly as the relay returns it

head prints the last entry as SEQ:HASH, and a sentence. Keep that line where the relay's
host cannot change it (a ticket, another machine): a log cut short and re-chained by
someone who can write the relay's files is only found against it.

verify checks the log's hash chain: every entry holds the hash of the one before it, an
HMAC under the relay's audit key (<data>/audit.key or ASKRELAY_AUDIT_KEY), so an edited or
removed entry breaks the chain. It prints "ok: N entries, the chain is intact" and exits
0, or prints each problem ("entry 12 was edited") and exits 1.

  --head SEQ:HASH  also check that the log still holds that entry with that hash (a
                   line "askrelay audit head" printed earlier)
  --json        print {"ok", "entries", "problems"} (head: {"seq", "hash"}) as the relay returns it

Only the human's token (the relay token) may read the log; an agent token is refused.

${CLIENT_ENV_HELP}`;

const OPTIONS = {
  url: { type: 'string' },
  after: { type: 'string' },
  jsonl: { type: 'boolean' },
  json: { type: 'boolean' },
  head: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

interface AuditPage {
  entries: AuditEntry[];
  next?: number;
}

/** The audit routes, on RelayClient's requests and errors. */
class AuditClient extends RelayClient {
  page(after: number): Promise<AuditPage> {
    return this.call('GET', `api/audit?after=${after}`) as Promise<AuditPage>;
  }

  verify(pin?: AuditHead): Promise<AuditCheck> {
    const query = pin ? `?head=${pin.seq}:${pin.hash}` : '';
    return this.call('GET', `api/audit/verify${query}`) as Promise<AuditCheck>;
  }

  async head(): Promise<AuditHead> {
    const head = (await this.call('GET', 'api/audit/head')) as AuditHead | undefined;
    if (!(Number.isSafeInteger(head?.seq) && typeof head?.hash === 'string')) throw new Error(`the relay at ${this.target.url} sent no audit head; is --url right?`);
    return head!;
  }

  /** Every entry after `after`, one page at a time, until the relay sends no `next`. */
  async *entries(after: number): AsyncGenerator<AuditEntry[]> {
    let from = after;
    for (;;) {
      const page = await this.page(from);
      if (!Array.isArray(page?.entries)) throw new Error(`the relay at ${this.target.url} sent no audit entries; is --url right?`);
      if (page.entries.length) yield page.entries;
      if (page.next === undefined) return;
      // A relay that does not move forward would loop for ever.
      if (!(typeof page.next === 'number' && page.next > from)) throw new Error(`the relay sent a next page (${String(page.next)}) that does not move past ${from}.`);
      from = page.next;
    }
  }
}

export async function auditCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('audit', () => parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS }));
  if (values.help) {
    console.log(AUDIT_HELP);
    return 0;
  }
  const [sub, ...extra] = positionals;
  if (sub === 'verify' || sub === 'head') {
    if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}". Run "askrelay audit --help".`);
    if (values.jsonl || values.after !== undefined) throw new UsageError(`--jsonl and --after are for listing the log, not for "audit ${sub}". Run "askrelay audit --help".`);
    if (sub === 'head') {
      if (values.head !== undefined) throw new UsageError('--head is for "audit verify". Run "askrelay audit --help".');
      return head(values.url, values.json ?? false);
    }
    return verify(values.url, values.json ?? false, headFlag(values.head));
  }
  if (sub !== undefined) throw new UsageError(`unexpected argument "${sub}"; the subcommands are "head" and "verify". Run "askrelay audit --help".`);
  if (values.head !== undefined) throw new UsageError('--head is for "audit verify". Run "askrelay audit --help".');
  if (values.json) throw new UsageError('use --jsonl for one JSON entry per line (--json is for "audit head" and "audit verify"). Run "askrelay audit --help".');
  return list(values.url, afterFlag(values.after), values.jsonl ?? false);
}

function afterFlag(raw: string | undefined): number {
  if (raw === undefined) return 0;
  const text = raw.trim();
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`--after takes a sequence number (a whole number, 0 or more), not "${raw}".`);
  }
  return Number(text);
}

function headFlag(raw: string | undefined): AuditHead | undefined {
  if (raw === undefined) return undefined;
  const pin = parseHead(raw);
  if (!pin) throw new UsageError(`--head takes SEQ:HASH as "askrelay audit head" prints it (a sequence number, a colon and 64 hex digits), not "${raw}".`);
  return pin;
}

async function list(url: string | undefined, after: number, jsonl: boolean): Promise<number> {
  const client = new AuditClient(findRelay(url));
  if (jsonl) {
    // Printed page by page: a long log starts flowing at once.
    for await (const entries of client.entries(after)) {
      process.stdout.write(entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
    }
    return 0;
  }
  const all: AuditEntry[] = [];
  for await (const entries of client.entries(after)) all.push(...entries);
  if (all.length === 0) console.log(after ? `No audit entries after ${after}.` : 'No audit entries.');
  else console.log(auditTable(all));
  return 0;
}

async function head(url: string | undefined, json: boolean): Promise<number> {
  const last = await new AuditClient(findRelay(url)).head();
  if (json) {
    console.log(JSON.stringify(last, null, 2));
    return 0;
  }
  const pin = `${last.seq}:${last.hash}`;
  console.log(pin);
  console.log(
    last.seq === 0
      ? 'The audit log is empty: there is no entry to pin yet.'
      : `Entry ${last.seq} is the last of the audit log. Keep this line where the relay's host cannot change it; "askrelay audit verify --head ${pin}" checks later that the log still holds it.`,
  );
  return 0;
}

async function verify(url: string | undefined, json: boolean, pin?: AuditHead): Promise<number> {
  const check = await new AuditClient(findRelay(url)).verify(pin);
  const problems = Array.isArray(check?.problems) ? check.problems : [];
  const ok = check?.ok === true && problems.length === 0;
  if (json) {
    console.log(JSON.stringify(check, null, 2));
  } else if (ok) {
    const pinned = pin ? ` and still holds the pinned head (entry ${pin.seq})` : '';
    console.log(`ok: ${check.entries} ${plural(check.entries, 'entry', 'entries')}, the chain is intact${pinned}`);
  } else {
    for (const problem of problems) console.log(problem);
    const n = problems.length || 1;
    console.log(`broken: ${n} ${plural(n, 'problem', 'problems')} in ${check?.entries ?? 0} ${plural(check?.entries ?? 0, 'entry', 'entries')}; the log was changed after it was written`);
  }
  return ok ? 0 : 1;
}

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many);

/** "2026-11-30 14:46:08" (UTC), or the text as sent when it is no time. */
function timeText(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toISOString().slice(0, 19).replace('T', ' ');
}

/** `action=answer code=own_session`, `agentsMayAnswer=true`; strings bare, the rest as JSON. */
function detailText(entry: AuditEntry): string {
  const parts: string[] = [];
  if (!entry.cardId && entry.sessionId) parts.push(`session=${entry.sessionId}`);
  for (const [key, value] of Object.entries(entry.detail ?? {})) {
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    parts.push(`${key}=${text}`);
  }
  return parts.join(' ').replace(/\s+/g, ' ');
}

/** The entries as a table, one row each; the last column (DETAIL) is never cut. */
export function auditTable(entries: AuditEntry[]): string {
  const rows: string[][] = [['SEQ', 'TIME (UTC)', 'EVENT', 'CARD', 'ACTOR', 'SURFACE', 'DETAIL']];
  for (const e of entries) {
    rows.push([
      String(e.seq),
      timeText(e.at),
      e.event,
      e.cardId ?? '-',
      `${e.actor?.kind}:${e.actor?.id}`,
      e.surface,
      detailText(e),
    ]);
  }
  return table(rows, { rightAlign: [0] });
}
