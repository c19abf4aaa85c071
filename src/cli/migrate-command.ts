import Database from 'better-sqlite3';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadOrCreateVapidKeys, VAPID_FILE, type VapidKeys } from '../push/vapid-keys.js';
import { migratedSecrets } from '../store/shared-secrets.js';
import { auditKey } from '../store/audit-chain.js';
import { AUDIT_KEY_FILE, TOKEN_FILE } from '../store/data-folder.js';
import { copySqliteToPostgres, type MigrationResult } from '../store/migrate-to-postgres.js';
import { DB_FILE } from '../store/stores.js';
import { UsageError, parseFlags } from './flags.js';

// askrelay migrate --from DIR --to URL: an embedded relay moved to PostgreSQL. The file is
// opened read-only and the copy is one transaction (src/store/migrate-to-postgres.ts); this
// file checks the inputs, says what was copied and what the nodes need to go on from it.

export const MIGRATE_HELP = `askrelay migrate — copy an embedded relay (its SQLite file) into an empty PostgreSQL database

Usage: askrelay migrate --from DIR --to URL

  --from DIR   the relay's data folder (the one "askrelay serve --data" used), which holds
               ${DB_FILE}; it is only read, never changed
  --to URL     the PostgreSQL database, postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE
               (default: env ASKRELAY_DATABASE_URL). The schema is made if it is missing.

Copies every card (answered and pending, with its deadline), every session with its state,
transcript, agent token (its hash) and watch grants, the audit log row for row (so its hash
chain stays the same chain), the push subscriptions, the chat channels' outboxes, messages
and bookmarks, the page's logins and the MCP calls' records. All of it is one transaction:
a copy that fails leaves the database empty. Stop the relay first: the copy holds what the
file held when it was read.

A database that already holds a relay (any card, session, audit entry or setting), or that
a running node uses, is refused and nothing is copied.

The relay token (ASKRELAY_TOKEN, else DIR/token) and the push keys (DIR/vapid.json) are
copied into the database, where every node finds them. The copy's audit chain is checked
with the audit key (ASKRELAY_AUDIT_KEY, else DIR/${AUDIT_KEY_FILE}), which stays out of the
database: start every node with ASKRELAY_AUDIT_KEY set to it (or a copy of the file in
its data folder).

Exit status: 0 copied, 1 nothing copied (an error, or a database that holds a relay).`;

const OPTIONS = {
  from: { type: 'string' },
  to: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The URL with its password replaced by ***, to print. */
export function maskUrl(url: URL): string {
  if (!url.password) return url.toString();
  const masked = new URL(url.toString());
  masked.password = '***';
  return masked.toString();
}

/** A postgres:// (or postgresql://) URL, or a UsageError that never repeats a password. */
function databaseUrl(raw: string | undefined): URL {
  if (raw === undefined || raw.trim() === '') {
    throw new UsageError('--to (or ASKRELAY_DATABASE_URL) is required: the PostgreSQL database to copy into, postgres://USER@HOST:PORT/DATABASE. Run "askrelay migrate --help".');
  }
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new UsageError('--to takes a postgres:// URL (postgres://USER@HOST:PORT/DATABASE), and what was given is not a URL.');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new UsageError(`--to takes a postgres:// URL (postgres://USER@HOST:PORT/DATABASE), not a ${url.protocol}// one (${maskUrl(url)}).`);
  }
  if (url.pathname.length <= 1) throw new UsageError(`--to names no database (${maskUrl(url)}): give it as postgres://USER@HOST:PORT/DATABASE.`);
  return url;
}

/** The relay's SQLite file in `dir`, or an error saying what is missing. */
function sqliteFile(raw: string | undefined): { dir: string; file: string } {
  if (raw === undefined || raw.trim() === '') throw new UsageError('--from is required: the data folder of the relay to copy. Run "askrelay migrate --help".');
  const dir = resolve(raw);
  if (!existsSync(dir)) throw new Error(`there is no data folder at ${dir}.`);
  if (!statSync(dir).isDirectory()) throw new Error(`${dir} is not a folder; --from takes the relay's data folder (the one "askrelay serve --data" used).`);
  const file = join(dir, DB_FILE);
  if (!existsSync(file)) throw new Error(`${dir} holds no ${DB_FILE}: is it the relay's data folder (the one "askrelay serve --data" used)?`);
  return { dir, file };
}

/** The key the relay keyed its log with, read as serve reads it, but never made. */
function readAuditKey(dir: string, env: NodeJS.ProcessEnv): { key?: Buffer; from: string } {
  const fromEnv = env.ASKRELAY_AUDIT_KEY?.trim();
  if (fromEnv) return { key: Buffer.from(fromEnv), from: 'ASKRELAY_AUDIT_KEY' };
  const file = join(dir, AUDIT_KEY_FILE);
  const stored = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  return stored ? { key: Buffer.from(stored), from: file } : { from: file };
}

export async function migrateCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values, positionals } = parseFlags('migrate', () => parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS }));
  if (values.help) {
    console.log(MIGRATE_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}". Run "askrelay migrate --help".`);
  const url = databaseUrl(values.to ?? env.ASKRELAY_DATABASE_URL);
  const { dir, file } = sqliteFile(values.from);
  if (existsSync(`${file}-wal`) && statSync(`${file}-wal`).size > 0) {
    console.warn(`askrelay migrate: ${file}-wal is not empty: a relay may still be running on ${dir}. What it writes after the copy is not copied; stop it first.`);
  }
  const key = readAuditKey(dir, env);

  let sqlite: Database.Database;
  try {
    sqlite = new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
  const pool = new pg.Pool({ connectionString: url.toString(), max: 2, connectionTimeoutMillis: 10_000 });
  // A connection the server drops while idle must not end the process with an unhandled error.
  pool.on('error', () => {});
  try {
    try {
      await pool.query('SELECT 1');
    } catch (err) {
      throw new Error(`cannot reach the database ${maskUrl(url)}: ${(err as Error).message || (err as { code?: string }).code}`);
    }
    let result: MigrationResult;
    try {
      result = await copySqliteToPostgres(sqlite, pool, { auditKey: key.key, settings: migratedSecrets(relaySecrets(dir, env, key.key)) });
    } catch (err) {
      throw new Error(`nothing was copied to ${maskUrl(url)}: ${(err as Error).message}`);
    }
    report(result, dir, url, key);
    return 0;
  } finally {
    sqlite.close();
    await pool.end();
  }
}

const count = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function report({ counts, auditHead, auditCheck }: MigrationResult, dir: string, url: URL, key: { key?: Buffer; from: string }): void {
  const n = (table: string) => counts[table] ?? 0;
  const channelRecords = n('channel_outbox') + n('channel_messages') + n('channel_state');
  const head = auditHead.seq ? ` (chain head ${auditHead.seq}:${auditHead.hash.slice(0, 12)}…)` : '';
  const parts = [
    count(n('cards'), 'card', 'cards'),
    `${count(n('sessions'), 'session', 'sessions')} (${count(n('transcript'), 'transcript line', 'transcript lines')}, ${count(n('agent_tokens'), 'agent token', 'agent tokens')}, ${count(n('watch_grants'), 'watch grant', 'watch grants')})`,
    `${count(n('audit'), 'audit entry', 'audit entries')}${head}`,
    count(n('push_subscriptions'), 'push subscription', 'push subscriptions'),
    count(channelRecords, 'channel record', 'channel records'),
    count(n('web_logins'), 'page login', 'page logins'),
    count(n('mcp_calls'), 'MCP call record', 'MCP call records'),
  ];
  console.log(`Copied ${dir} to ${maskUrl(url)}: ${parts.join(', ')}.`);
  if (!auditHead.seq) console.log('The audit log was empty.');
  else if (auditCheck.ok) {
    const keyed = key.key ? `, checked with the audit key ${auditKey(key.key).id} (${key.from})` : '';
    console.log(`The audit chain is intact on the copy${keyed}. Pin its head elsewhere: "askrelay audit verify --head ${auditHead.seq}:${auditHead.hash}" finds it cut short later.`);
  } else {
    // Copied as it was: the file's log had these problems already (the copy is checked to find the same).
    console.log(`The audit log was copied as it was, and it does not verify in ${DB_FILE} either:`);
    for (const problem of auditCheck.problems) console.log(`  ${problem}`);
    if (!key.key) console.log(`  (no audit key to check it with: neither ASKRELAY_AUDIT_KEY nor ${key.from})`);
  }
  const audit = key.key ? (key.from === 'ASKRELAY_AUDIT_KEY' ? 'the one this relay ran with' : `the key in ${key.from}`) : 'the one this relay ran with';
  console.log(
    `The relay token and the push (VAPID) keys were copied into the database: every node uses them, so agent tokens, the page's logins and push subscriptions carry on. Start every node with ASKRELAY_DATABASE_URL=${maskUrl(url)} and ASKRELAY_AUDIT_KEY set to ${audit}, or that file in its data folder (the key stays out of the database; "askrelay audit verify" needs it to check the chain).`,
  );
}

/** The embedded relay's token and VAPID keys, and its audit key, as the relay would read them. */
function relaySecrets(dir: string, env: NodeJS.ProcessEnv, auditKey: Buffer | undefined): { token?: string; auditKey?: Buffer; vapid?: VapidKeys } {
  const tokenFile = join(dir, TOKEN_FILE);
  const token = env.ASKRELAY_TOKEN?.trim() || (existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : undefined);
  const vapidFile = join(dir, VAPID_FILE);
  const vapid = existsSync(vapidFile) ? loadOrCreateVapidKeys(dir) : undefined;
  return { ...(token ? { token } : {}), ...(auditKey ? { auditKey } : {}), ...(vapid ? { vapid } : {}) };
}
