// askrelay doctor's results and how they are shown (pure). Every check makes one or more
// results; a result is one line: a mark, the thing checked, and a sentence. A warn or FAIL
// sentence says what is wrong and what to do, so an operator can act on the line alone.

/** ok: checked and fine; info: nothing to judge (not configured); warn: works, worth a look; fail: broken. */
export type Status = 'ok' | 'info' | 'warn' | 'fail';

export interface CheckResult {
  /** Stable for scripts: "relay", "store", "provider:claude", "channel:telegram", … */
  id: string;
  /** What the line is about, as printed: "relay", "claude", "telegram", … */
  name: string;
  status: Status;
  message: string;
}

export interface CheckInfo {
  /** The id of its results (a provider's and a channel's end in ":<its id>"). */
  id: string;
  /** What it looks at, for --help and docs/operations.md. */
  looksAt: string;
}

/** The checks in the order their lines print. */
export const CHECKS: readonly CheckInfo[] = [
  { id: 'settings', looksAt: 'the ASKRELAY_* settings "askrelay serve" reads (durations, port, database URL, push, chat) are valid' },
  { id: 'relay', looksAt: 'GET /api/health at --url / ASKRELAY_URL answers, with its version and store' },
  { id: 'token', looksAt: 'the relay accepts the token (ASKRELAY_TOKEN, else <data>/token)' },
  { id: 'data-folder', looksAt: 'the data folder exists, belongs to you, is writable and 0700' },
  { id: 'token-file', looksAt: '<data>/token is 0600 and at least 24 characters long' },
  { id: 'audit-key', looksAt: 'ASKRELAY_AUDIT_KEY or <data>/audit.key: 0600, at least 24 characters' },
  { id: 'channels-file', looksAt: 'the chat channels file (it holds bot tokens) is 0600' },
  { id: 'store', looksAt: 'the SQLite file, opened read-only (PRAGMA quick_check, its tables and columns, 0600), or the PostgreSQL database (it answers; schema_migrations against this askrelay\'s migrations)' },
  { id: 'push-keys', looksAt: '<data>/vapid.json is 0600 and holds a matching P-256 key pair (on PostgreSQL: the pair kept in the database)' },
  { id: 'disk', looksAt: 'free space where the data folder is: warn under 1 GB, FAIL under 100 MB' },
  { id: 'provider', looksAt: 'each provider: its base URL and API key are set together, and the base URL answers an HTTP GET (any status) in time' },
  { id: 'channel', looksAt: 'each chat channel switched on: one harmless call with its credentials (Telegram getMe, Slack auth.test, Discord GET /users/@me, Mattermost GET /api/v4/users/me)' },
];

const MARKS: Record<Status, string> = { ok: 'ok', info: 'info', warn: 'warn', fail: 'FAIL' };

/** A result; its message starts with a capital, whatever sentence (often another module's) it holds. */
export const result = (id: string, name: string, status: Status, message: string): CheckResult => ({
  id,
  name,
  status,
  message: `${message.charAt(0).toUpperCase()}${message.slice(1)}`,
});

/** Exit status: 1 when anything failed; warnings alone still pass. */
export const exitCode = (results: readonly CheckResult[]): 0 | 1 => (results.some((r) => r.status === 'fail') ? 1 : 0);

/** Secrets shorter than this are left alone: replacing "1" or "abc" would garble the text, and they protect nothing. */
const MIN_REDACTED = 6;

/**
 * Every occurrence of a secret replaced by ***. The checks never put a token or key into a
 * sentence, but some sentences carry text from elsewhere (a library's error, a JSON parse
 * message quoting a file): this is the last line of defence, applied to everything shown.
 */
export function redact(results: readonly CheckResult[], secrets: readonly (string | undefined)[]): CheckResult[] {
  const known = [...new Set(secrets.filter((s): s is string => !!s && s.length >= MIN_REDACTED))].sort((a, b) => b.length - a.length);
  const scrub = (text: string) => known.reduce((out, secret) => out.split(secret).join('***'), text);
  return results.map((r) => ({ ...r, name: scrub(r.name), message: scrub(r.message) }));
}

/** One line per result: mark, name, sentence, aligned; then a line that sums them up. */
export function renderReport(results: readonly CheckResult[]): string {
  const width = Math.max(0, ...results.map((r) => r.name.length));
  const lines = results.map((r) => `${MARKS[r.status].padEnd(4)}  ${r.name.padEnd(width)}  ${r.message}`);
  return [...lines, '', summary(results)].join('\n');
}

export function summary(results: readonly CheckResult[]): string {
  const count = (status: Status) => results.filter((r) => r.status === status).length;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const fails = count('fail');
  const warns = count('warn');
  if (fails) return `${plural(fails, 'problem')} to fix (FAIL)${warns ? ` and ${plural(warns, 'warning')}` : ''}; each line says what to do.`;
  if (warns) return `No problems; ${plural(warns, 'warning')} worth a look.`;
  return `All well: ${plural(count('ok'), 'check')} passed.`;
}

/** --help's list of what is checked, wrapped to `columns`. */
export function checksHelp(columns = 92): string {
  const width = Math.max(...CHECKS.map((c) => c.id.length));
  const indent = ' '.repeat(width + 4);
  return CHECKS.map((c) => {
    const lines = [`  ${c.id.padEnd(width)}  `];
    for (const word of c.looksAt.split(' ')) {
      const last = lines[lines.length - 1];
      if (last.length + word.length > columns && last.trim() !== c.id) lines.push(`${indent}${word}`);
      else lines[lines.length - 1] = last.endsWith('  ') || last === indent ? `${last}${word}` : `${last} ${word}`;
    }
    return lines.join('\n');
  }).join('\n');
}
