import { createHash, randomBytes } from 'node:crypto';
import { generateVapidKeys, isVapidKeys, type VapidKeys } from '../push/vapid-keys.js';
import { shortSecret } from './data-folder.js';
import type { SharedSetting } from './postgres/shared-settings.js';

// Nodes sharing one database must share the relay's secrets: the relay token (the page's
// cookie key and the agents' tokens derive from it), the VAPID key pair and the audit key.
// A secret given in the environment is used as given; otherwise the first node makes it and
// keeps it in the database, and every later node reads that one. Either way the database
// keeps a fingerprint, so a node started with a different ASKRELAY_TOKEN or
// ASKRELAY_AUDIT_KEY than its peers refuses to start instead of splitting the relay.

export interface RelaySecrets {
  token: string;
  auditKey: Buffer;
  vapid: VapidKeys;
  /** What was made, one sentence each, for the operator. */
  notices: string[];
}

type Shared = (name: string, make: () => string) => Promise<SharedSetting>;

const fresh = (bytes: number) => randomBytes(bytes).toString('base64url');
const fingerprint = (what: string, secret: string) => createHash('sha256').update(`askrelay ${what} fingerprint\0${secret}`).digest('hex');

/**
 * The rows `askrelay migrate` writes so that the nodes carry on with an embedded relay's
 * secrets: its token and VAPID keys kept in the database, and only the audit key's
 * fingerprint (the key itself stays outside: every node is started with ASKRELAY_AUDIT_KEY).
 */
export function migratedSecrets(found: { token?: string; auditKey?: Buffer; vapid?: VapidKeys }): Record<string, string> {
  return {
    ...(found.token ? { token: found.token, token_fingerprint: fingerprint('token', found.token) } : {}),
    ...(found.auditKey ? { audit_key_fingerprint: fingerprint('audit_key', found.auditKey.toString()) } : {}),
    ...(found.vapid ? { vapid: JSON.stringify({ publicKey: found.vapid.publicKey, privateKey: found.vapid.privateKey }) } : {}),
  };
}

/** The relay's secrets for a node on a shared database (`given`: ASKRELAY_TOKEN, ASKRELAY_AUDIT_KEY). */
export async function sharedSecrets(shared: Shared, given: { token?: string; auditKey?: string }): Promise<RelaySecrets> {
  const notices: string[] = [];
  const token = await one(shared, notices, {
    name: 'token',
    variable: 'ASKRELAY_TOKEN',
    kind: 'token',
    given: given.token,
    make: () => fresh(24),
    made: 'Made the relay token and kept it in the database: every node on it uses this one.',
  });
  const auditKey = await one(shared, notices, {
    name: 'audit_key',
    variable: 'ASKRELAY_AUDIT_KEY',
    kind: 'key',
    given: given.auditKey,
    make: () => fresh(32),
    made: 'Made the audit key and kept it in the database; set ASKRELAY_AUDIT_KEY on every node instead to keep the log tamper-evident against whoever can write the database (docs/security.md).',
  });
  const stored = await shared('vapid', () => JSON.stringify(generateVapidKeys()));
  const vapid: unknown = JSON.parse(stored.value);
  if (!isVapidKeys(vapid)) throw new Error('The database holds a VAPID setting that is not a key pair {publicKey, privateKey}; delete its row in relay_settings to make a new one.');
  return { token, auditKey: Buffer.from(auditKey), vapid: { publicKey: vapid.publicKey, privateKey: vapid.privateKey }, notices };
}

interface SecretSpec {
  name: string;
  variable: string;
  kind: 'token' | 'key';
  given?: string;
  make(): string;
  made: string;
}

async function one(shared: Shared, notices: string[], spec: SecretSpec): Promise<string> {
  if (spec.given !== undefined) {
    const problem = shortSecret(spec.variable, spec.kind, spec.given, `Give every node the same ${spec.variable} of at least 24 characters, or unset it to use the one kept in the database.`);
    if (problem) throw new Error(problem);
  }
  const secret = spec.given ?? (await kept(shared, notices, spec));
  const check = await shared(`${spec.name}_fingerprint`, () => fingerprint(spec.name, secret));
  if (check.value !== fingerprint(spec.name, secret)) {
    throw new Error(
      spec.given !== undefined
        ? `${spec.variable}${spec.name === 'audit_key' ? ' (or <data>/audit.key)' : ''} is not the ${spec.kind} the other nodes on this database use; give every node the same one.`
        : `The other nodes on this database were started with ${spec.variable}${spec.name === 'audit_key' ? ' (or <data>/audit.key)' : ''}; start this node with the same ${spec.kind}.`,
    );
  }
  return secret;
}

async function kept(shared: Shared, notices: string[], spec: SecretSpec): Promise<string> {
  const setting = await shared(spec.name, spec.make);
  if (setting.made) notices.push(spec.made);
  return setting.value;
}
