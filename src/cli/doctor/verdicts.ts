import { createECDH } from 'node:crypto';
import { isVapidKeys } from '../../push/vapid-keys.js';
import { shortSecret } from '../../store/data-folder.js';
import type { LockState } from '../../store/folder-lock.js';
import type { Migration } from '../../store/postgres/migrations.js';
import { result, type CheckResult } from './report.js';

// What askrelay doctor makes of the facts its probes gathered about the data folder, its
// files, the store and the disk (pure: facts in, result lines out). The sentences name the
// file and the fix; none of them quotes a secret, only its length.

export interface FolderFacts {
  path: string;
  exists: boolean;
  isDirectory?: boolean;
  mode?: number;
  uid?: number;
  writable?: boolean;
  /** The user running doctor (undefined where there are no uids). */
  me?: number;
}

export interface FileFacts {
  path: string;
  exists: boolean;
  mode?: number;
  /** The file's text (trimmed), for the secret files whose length is judged; never printed. */
  text?: string;
}

const octal = (mode: number) => (mode & 0o777).toString(8).padStart(4, '0');

/** The data folder: there, a folder, yours, writable, closed to others. */
export function folderResults(folder: FolderFacts, onPostgres: boolean): CheckResult[] {
  const r = (status: CheckResult['status'], message: string) => result('data-folder', 'data folder', status, message);
  const { path } = folder;
  if (!folder.exists) {
    return [onPostgres
      ? r('info', `${path} does not exist; on PostgreSQL a node keeps at most its audit.key there.`)
      : r('fail', `${path} does not exist: start "askrelay serve --data ${path}" once to make it, or point --data / ASKRELAY_DATA at the relay's folder.`)];
  }
  if (!folder.isDirectory) return [r('fail', `${path} is not a folder: give --data / ASKRELAY_DATA the relay's data folder.`)];
  const out: CheckResult[] = [];
  const mode = folder.mode ?? 0;
  if (folder.me !== undefined && folder.uid !== undefined && folder.uid !== folder.me) {
    out.push(r('warn', `${path} belongs to uid ${folder.uid}, not to you (uid ${folder.me}): run doctor as the user that runs "askrelay serve", or what it says about modes and writing may not hold for the relay.`));
  }
  if (!folder.writable) out.push(r('fail', `${path} cannot be written by you: "askrelay serve" must write its files there; make it writable by the user running askrelay (chown, chmod 700).`));
  if (mode & 0o022) {
    out.push(r('fail', `${path} is mode ${octal(mode)}: other users can add, remove or replace its files (the token, the database); run "chmod 700 ${path}".`));
  } else if (mode & 0o077) {
    out.push(r('warn', `${path} is mode ${octal(mode)}: other users can look inside; "askrelay serve" tightens it to 0700 at its next start, or run "chmod 700 ${path}" now.`));
  }
  return out.length ? out : [r('ok', `${path} is 0700, yours and writable.`)];
}

/** The data folder's lock: which relay holds it now, if any (the kernel's lock, so never a stale one). */
export function lockResult(path: string, lock: LockState): CheckResult {
  const r = (status: CheckResult['status'], message: string) => result('folder-lock', 'folder lock', status, message);
  if (lock.state === 'free') return r('info', `No relay holds ${path} now: "askrelay serve" may start there.`);
  if (lock.state === 'unlockable') return r('warn', `${path} cannot be locked (${lock.reason}): nothing would keep a second relay off it.`);
  const h = lock.holder;
  return r('ok', h ? `Held by the askrelay started ${h.startedAt} (pid ${h.pid} on ${h.host}): a second relay there is refused.` : `Held by a running askrelay: a second relay there is refused.`);
}

/**
 * A secret file wider than 0600. Others reach a file only through its folder, so the mode is a
 * FAIL when the folder lets them through (they can read it now) and a warning when the folder
 * keeps them out (a copy of the file, or a looser folder later, would not).
 */
export function modeResult(id: string, name: string, file: FileFacts, folderMode: number, holds: string): CheckResult | undefined {
  const mode = file.mode ?? 0;
  if (!file.exists || !(mode & 0o077)) return undefined;
  const reachable = (mode & 0o070 && folderMode & 0o010) || (mode & 0o007 && folderMode & 0o001);
  const fix = `run "chmod 600 ${file.path}"`;
  if (reachable) return result(id, name, 'fail', `${file.path} is mode ${octal(mode)}: users other than its owner can read ${holds}; ${fix} (and change that secret if they may have read it).`);
  return result(id, name, 'warn', `${file.path} is mode ${octal(mode)}, wider than 0600 (${holds}); the folder keeps others out for now, but a copy or a looser folder would not: ${fix}.`);
}

/** <data>/token, which the relay uses unless ASKRELAY_TOKEN is set (and never on PostgreSQL). */
export function tokenFileResults(file: FileFacts, folderMode: number, used: 'file' | 'env' | 'database'): CheckResult[] {
  const r = (status: CheckResult['status'], message: string) => result('token-file', 'token file', status, message);
  const mode = modeResult('token-file', 'token file', file, folderMode, 'the relay token');
  const out = mode ? [mode] : [];
  if (used !== 'file') {
    const why = used === 'env' ? 'ASKRELAY_TOKEN is set' : 'on PostgreSQL the token is kept in the database';
    if (file.exists) out.push(r('info', `${file.path} is not used: ${why}.`));
    return out.length ? out : [r('info', `No token file needed: ${why}.`)];
  }
  if (!file.exists) return [r('info', `No token file yet: "askrelay serve" started without ASKRELAY_TOKEN makes ${file.path}.`)];
  const text = file.text ?? '';
  if (!text) out.push(r('warn', `${file.path} is empty: "askrelay serve" writes a new token into it at its next start, and clients holding the old one are refused.`));
  else {
    const short = shortSecret(`the token in ${file.path}`, 'token', text, 'Put a longer one in the file, or delete it to have a new one made.');
    if (short) out.push(r('fail', `${short} "askrelay serve" refuses to start with it.`));
  }
  return out.length ? out : [r('ok', `${file.path} holds a token of ${text.length} characters and is 0600.`)];
}

/** The audit log's key: ASKRELAY_AUDIT_KEY, else <data>/audit.key (on PostgreSQL possibly neither). */
export function auditKeyResults(file: FileFacts, folderMode: number, fromEnv: boolean, onPostgres: boolean): CheckResult[] {
  const r = (status: CheckResult['status'], message: string) => result('audit-key', 'audit key', status, message);
  const mode = modeResult('audit-key', 'audit key', file, folderMode, 'the audit key');
  const out = mode ? [mode] : [];
  if (fromEnv) return [...out, r('ok', `ASKRELAY_AUDIT_KEY is set${file.exists ? `; the relay uses it rather than ${file.path}` : ''}.`)];
  if (!file.exists) {
    return [onPostgres
      ? r('info', 'No audit key here: the nodes use the one kept in the database; set ASKRELAY_AUDIT_KEY on every node to keep it out of the database (docs/security.md).')
      : r('info', `No audit key yet: "askrelay serve" makes ${file.path} at its first start.`)];
  }
  const text = file.text ?? '';
  const short = shortSecret(`the audit key in ${file.path}`, 'key', text, 'Put the key back from a backup, or delete the file to have a new one made (entries keyed with the old key will then fail "askrelay audit verify").');
  if (short) return [...out, r('fail', `${short} "askrelay serve" refuses to start with it.`)];
  return out.length ? out : [r('ok', `${file.path} holds a key of ${text.length} characters and is 0600.`)];
}

/** Why `value` is no usable VAPID key pair, or undefined when it is one whose halves belong together. */
export function vapidProblem(value: unknown): string | undefined {
  if (!isVapidKeys(value)) return 'does not hold a VAPID key pair {publicKey, privateKey} (65 and 32 bytes, base64url)';
  try {
    const curve = createECDH('prime256v1');
    curve.setPrivateKey(Buffer.from(value.privateKey, 'base64url'));
    if (!curve.getPublicKey().equals(Buffer.from(value.publicKey, 'base64url'))) return 'holds a public key that does not belong to its private key, so push services would refuse every push';
  } catch {
    return 'holds a private key that is not a P-256 key';
  }
  return undefined;
}

const NEW_PAIR = 'every browser then has to click Enable notifications again';

/** <data>/vapid.json on SQLite; `stored` is the pair's JSON text as the database keeps it on PostgreSQL (undefined: none yet). */
export function pushKeyResults(file: FileFacts, folderMode: number, onPostgres: boolean, stored?: string): CheckResult[] {
  const r = (status: CheckResult['status'], message: string) => result('push-keys', 'push keys', status, message);
  const mode = modeResult('push-keys', 'push keys', file, folderMode, 'the push private key');
  const out = mode ? [mode] : [];
  if (onPostgres) {
    if (stored === undefined) return [...out, r('info', 'Kept in the database, where there are none yet: the first node to start makes the pair.')];
    const problem = vapidProblem(parse(stored));
    if (problem) return [...out, r('fail', `The database's VAPID setting ${problem}: delete the row named vapid in relay_settings to have a new pair made (${NEW_PAIR}).`)];
    return [...out, r('ok', 'Kept in the database (relay_settings): a P-256 key pair whose halves match.')];
  }
  if (!file.exists) return [r('warn', `${file.path} does not exist: "askrelay serve" makes it at every start, so either no relay has started on this folder yet or it runs with another --data.`)];
  const problem = vapidProblem(parse(file.text ?? ''));
  if (problem) return [...out, r('fail', `${file.path} ${problem}; "askrelay serve" refuses to start with it. Remove it to have a new pair made (${NEW_PAIR}).`)];
  return out.length ? out : [r('ok', `${file.path} holds a P-256 key pair whose halves match and is 0600.`)];
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const GB = 1024 ** 3;
const MB = 1024 ** 2;
export const DISK_WARN_BYTES = GB;
export const DISK_FAIL_BYTES = 100 * MB;

export const bytesText = (n: number) => (n >= GB ? `${(n / GB).toFixed(1)} GB` : `${Math.floor(n / MB)} MB`);

/** Free space for the file system the data folder is on (`where`: the folder, or its nearest existing parent). */
export function diskResult(where: string, freeBytes: number): CheckResult {
  const free = `${bytesText(freeBytes)} free on the file system of ${where}`;
  if (freeBytes < DISK_FAIL_BYTES) return result('disk', 'free disk', 'fail', `Only ${free}: the database's writes will soon fail; free space or move the data folder.`);
  if (freeBytes < DISK_WARN_BYTES) return result('disk', 'free disk', 'warn', `Only ${free}: free some space before it runs out (askrelay needs room for the database and its write-ahead log).`);
  return result('disk', 'free disk', 'ok', `${free[0].toUpperCase()}${free.slice(1)}.`);
}

/** What the SQLite probe found: the file's integrity check and its tables with their columns. */
export type SqliteFacts =
  | { exists: false }
  | { exists: true; error: string }
  | { exists: true; quickCheck: string[]; tables: Record<string, string[]> };

/** The SQLite file against the tables and columns a fresh store of this askrelay has. */
export function sqliteResults(file: string, facts: SqliteFacts, expected: Record<string, string[]>): CheckResult {
  const r = (status: CheckResult['status'], message: string) => result('store', 'store', status, message);
  if (!facts.exists) return r('warn', `${file} does not exist: "askrelay serve" makes it at its first start, so either no relay has started on this folder yet or it runs with another --data.`);
  if ('error' in facts) return r('fail', facts.error);
  if (facts.quickCheck.join() !== 'ok') {
    const first = facts.quickCheck.slice(0, 3).join('; ');
    return r('fail', `${file} fails PRAGMA quick_check (${first}${facts.quickCheck.length > 3 ? '; …' : ''}): the file is damaged. Stop the relay and restore it from a backup, or move it away to start with an empty one.`);
  }
  const lacking = Object.entries(expected).flatMap(([table, columns]) => {
    const have = facts.tables[table];
    if (!have) return [`table ${table}`];
    return columns.filter((c) => !have.includes(c)).map((c) => `column ${table}.${c}`);
  });
  if (lacking.length) {
    return r('warn', `${file} lacks ${lacking.join(', ')}: an older askrelay made it; "askrelay serve" of this version adds what is missing at its next start.`);
  }
  return r('ok', `${file} passes PRAGMA quick_check and has all ${Object.keys(expected).length} tables this askrelay uses.`);
}

export interface AppliedMigration {
  version: number;
  name: string;
}

/** The database's schema_migrations (undefined: no such table) against this askrelay's MIGRATIONS. */
export function migrationResults(where: string, applied: AppliedMigration[] | undefined, known: readonly Migration[]): CheckResult {
  const r = (status: CheckResult['status'], message: string) => result('store', 'store', status, message);
  if (!applied) return r('warn', `${where} answers but holds no askrelay schema yet (no schema_migrations table): "askrelay serve" makes it at its first start there.`);
  const byVersion = new Map(applied.map((m) => [m.version, m.name]));
  const renamed = known.filter((m) => byVersion.has(m.version) && byVersion.get(m.version) !== m.name);
  if (renamed.length) {
    const m = renamed[0];
    return r('fail', `${where} records migration ${m.version} as "${byVersion.get(m.version)}", but this askrelay's migration ${m.version} is "${m.name}": the schema was made by a different askrelay. Point --database at the relay's own database, or use the askrelay that made it.`);
  }
  const newer = applied.filter((m) => !known.some((k) => k.version === m.version));
  if (newer.length) {
    return r('warn', `${where} has migrations this askrelay does not know (${newer.map((m) => `${m.version} ${m.name}`).join(', ')}): a newer askrelay migrated it; run the same askrelay version here and on every node.`);
  }
  const missing = known.filter((m) => !byVersion.has(m.version));
  if (missing.length) {
    return r('warn', `${where} lacks migrations ${missing.map((m) => `${m.version} (${m.name})`).join(', ')}: "askrelay serve" of this version applies them at its next start; a node running on it now is an older askrelay.`);
  }
  return r('ok', `${where} answers; its schema has all ${known.length} migrations of this askrelay.`);
}
