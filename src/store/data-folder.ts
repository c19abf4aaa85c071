import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSecretFile, privateFolder, writeSecretFile } from './secret-file.js';

// The secrets the relay keeps in its data folder, beside the database but never in it:
// the relay token (the human's) and the audit key (which keys the audit log's chain).
// Each comes from its variable when set, else from its file, made on first start. Every
// load returns what the relay should say about it (a folder tightened, a file replaced).

export const TOKEN_FILE = 'token';
export const AUDIT_KEY_FILE = 'audit.key';
/** Shorter tokens and keys are refused: 24 characters of base64url are 144 bits. */
export const MIN_SECRET_CHARS = 24;

export interface Loaded<T> {
  value: T;
  /** A sentence for the operator, when something was made or repaired. */
  notice?: string;
}

const fresh = () => randomBytes(24).toString('base64url');

/** The sentence refusing a secret that is too short, or undefined when it is long enough. */
export function shortSecret(what: string, kind: 'token' | 'key', secret: string, fix: string): string | undefined {
  if (secret.length >= MIN_SECRET_CHARS) return undefined;
  return `${what} is ${secret.length} character${secret.length === 1 ? '' : 's'} long; the relay needs a ${kind} of at least ${MIN_SECRET_CHARS} characters. ${fix}`;
}

/** Makes the data folder 0700 (tightening one that others could read) and says when it was open. */
export function openDataFolder(dataDir: string): string | undefined {
  const was = privateFolder(dataDir);
  return was === undefined ? undefined : `The data folder ${dataDir} was open to other users (mode ${was.toString(8).padStart(4, '0')}); it is now 0700.`;
}

/** Reads a secret file, trimmed; undefined when there is none. */
function readSecret(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * ASKRELAY_TOKEN wins; otherwise the token made on first start and kept in <data>/token.
 * An empty token file (a hand edit, or a crash while an older relay wrote it) is replaced
 * by a new token; a short one is refused, naming where it came from.
 */
export function loadOrCreateToken(dataDir: string, fromEnv?: string): Loaded<string> {
  if (fromEnv !== undefined) {
    const problem = shortSecret('ASKRELAY_TOKEN', 'token', fromEnv, 'Make one with "openssl rand -base64 24", or unset ASKRELAY_TOKEN to have one made and kept in the data folder.');
    if (problem) throw new Error(problem);
    return { value: fromEnv };
  }
  const file = join(dataDir, TOKEN_FILE);
  const stored = readSecret(file);
  if (stored === undefined) {
    const token = fresh();
    if (createSecretFile(file, `${token}\n`)) return { value: token };
    return loadOrCreateToken(dataDir); // another relay made it first: use that one
  }
  if (stored === '') {
    const token = fresh();
    writeSecretFile(file, `${token}\n`);
    return { value: token, notice: `The token file ${file} was empty; a new token was written to it.` };
  }
  const problem = shortSecret(`the token in ${file}`, 'token', stored, `Put a longer one in the file, or delete it to have a new one made.`);
  if (problem) throw new Error(problem);
  return { value: stored };
}

/**
 * The key of the audit log's chain: ASKRELAY_AUDIT_KEY, else <data>/audit.key, made on
 * first start. It is kept out of the database so that whoever can rewrite the database
 * cannot recompute the chain. A file that is empty or short is refused, never replaced:
 * entries keyed with the lost key could not be checked any more.
 */
export function loadOrCreateAuditKey(dataDir: string, fromEnv?: string): Loaded<Buffer> {
  if (fromEnv !== undefined) {
    const problem = shortSecret('ASKRELAY_AUDIT_KEY', 'key', fromEnv, 'Make one with "openssl rand -base64 32", or unset ASKRELAY_AUDIT_KEY to have one made and kept in the data folder.');
    if (problem) throw new Error(problem);
    return { value: Buffer.from(fromEnv) };
  }
  const file = join(dataDir, AUDIT_KEY_FILE);
  const stored = readSecret(file);
  if (stored === undefined) {
    const key = randomBytes(32).toString('base64url');
    if (!createSecretFile(file, `${key}\n`)) return loadOrCreateAuditKey(dataDir);
    return { value: Buffer.from(key), notice: `Made the audit key ${file}; the audit log is keyed with it from now on (keep it with your backups).` };
  }
  const problem = shortSecret(
    `the audit key in ${file}`,
    'key',
    stored,
    'Put the key back from a backup, or delete the file to have a new one made (entries keyed with the old key will then fail "askrelay audit verify").',
  );
  if (problem) throw new Error(problem);
  return { value: Buffer.from(stored) };
}

/** The audit key file a data folder holds, if any (a node on PostgreSQL reads it, never makes it). */
export function existingAuditKey(dataDir: string): string | undefined {
  const file = join(dataDir, AUDIT_KEY_FILE);
  const stored = readSecret(file);
  if (stored === undefined) return undefined;
  const problem = shortSecret(`the audit key in ${file}`, 'key', stored, 'Put the key back from a backup, or delete the file.');
  if (problem) throw new Error(problem);
  return stored;
}
