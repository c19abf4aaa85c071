import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { namedDuration } from '../config.js';
import { VAPID_FILE } from '../push/vapid-keys.js';
import { AUDIT_KEY_FILE, TOKEN_FILE } from '../store/data-folder.js';
import { checksHelp, exitCode, redact, renderReport } from './doctor/report.js';
import { runChecks } from './doctor/run-checks.js';
import { UsageError, parseFlags } from './flags.js';

// askrelay doctor: checks a relay and its set-up and says, one line each, what is fine and
// what is wrong, with what to do about it. It reads the environment "askrelay serve" and the
// client commands read, only reads (files, the database), and never prints a secret.

export const DOCTOR_HELP = `askrelay doctor — check a relay and its set-up, and say what is wrong

Usage: askrelay doctor [--url URL] [--data DIR] [--database URL] [--json] [--timeout 5s]

  --url URL       the relay (env ASKRELAY_URL, else http://127.0.0.1:$ASKRELAY_PORT, default 7070)
  --data DIR      its data folder (env ASKRELAY_DATA, default ./.askrelay)
  --database URL  its PostgreSQL database (env ASKRELAY_DATABASE_URL; unset: the SQLite file)
  --json          print the results as a JSON array of {id, name, status, message}
  --timeout D     how long each network check may take (default 5s; 500ms, 10s, …)

Run it with the environment "askrelay serve" runs with: it checks the provider and chat
variables, the token, the data folder and the store as the relay would find them.
One line per check, marked ok, info (not configured: nothing to judge), warn or FAIL; each
warn and FAIL line says what is wrong and what to do. It only reads: the SQLite file is
opened read-only, the database is only asked SELECTs, each provider gets one GET (without
its key) and each chat channel one harmless call with its token. No secret is printed.

What it checks:
${checksHelp()}

Exit status: 0 when nothing FAILs (warnings allowed), 1 when something does.`;

const OPTIONS = {
  url: { type: 'string' },
  data: { type: 'string' },
  database: { type: 'string' },
  json: { type: 'boolean' },
  timeout: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function doctorCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const { values, positionals } = parseFlags('doctor', () => parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS }));
  if (values.help) {
    console.log(DOCTOR_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}". Run "askrelay doctor --help".`);
  let timeoutMs: number;
  try {
    timeoutMs = namedDuration('--timeout', values.timeout ?? '5s');
  } catch (err) {
    throw new UsageError(`${(err as Error).message} Run "askrelay doctor --help".`);
  }
  const dataDir = resolve(values.data ?? env.ASKRELAY_DATA?.trim() ?? '.askrelay');
  const databaseUrl = (values.database ?? env.ASKRELAY_DATABASE_URL)?.trim() || undefined;
  // The flags stand in for their variables, so that every check (and findRelay) sees the same set-up.
  const seen: NodeJS.ProcessEnv = { ...env, ASKRELAY_DATA: dataDir, ...(databaseUrl ? { ASKRELAY_DATABASE_URL: databaseUrl } : {}) };
  const results = redact(await runChecks({ env: seen, urlFlag: values.url, dataDir, databaseUrl: postgresUrl(databaseUrl), timeoutMs }), knownSecrets(seen, dataDir, databaseUrl));
  console.log(values.json ? JSON.stringify(results, null, 2) : renderReport(results));
  return exitCode(results);
}

/** Only a postgres:// URL selects PostgreSQL; anything else is the settings check's FAIL, and the SQLite checks run. */
const postgresUrl = (url: string | undefined) => (url && /^postgres(ql)?:\/\//i.test(url) ? url : undefined);

/** Names of variables that hold secrets, by the conventions every SDK and askrelay follow. */
const SECRET_NAME = /(TOKEN|_KEY|SECRET|PASSWORD)$/i;

/** Every secret the set-up holds, so that none can reach the output (report.ts: redact). */
function knownSecrets(env: NodeJS.ProcessEnv, dataDir: string, databaseUrl: string | undefined): string[] {
  const secrets = Object.entries(env).flatMap(([name, value]) => (SECRET_NAME.test(name) && value?.trim() ? [value.trim()] : []));
  const read = (path: string) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return undefined;
    }
  };
  const fileText = (name: string) => read(join(dataDir, name))?.trim();
  secrets.push(...[fileText(TOKEN_FILE), fileText(AUDIT_KEY_FILE)].filter((s): s is string => !!s));
  secrets.push(...stringsUnder(parseJson(fileText(VAPID_FILE)), /private/i));
  const channelsFile = env.ASKRELAY_CHANNELS?.trim() ? resolve(env.ASKRELAY_CHANNELS.trim()) : join(dataDir, 'channels.json');
  secrets.push(...stringsUnder(parseJson(read(channelsFile)), /token|secret/i));
  if (databaseUrl) {
    try {
      const password = new URL(databaseUrl).password;
      if (password) secrets.push(password, decodeURIComponent(password));
    } catch {
      // Not a URL: the settings check says so, and there is no password to find.
    }
  }
  return secrets;
}

function parseJson(text: string | undefined): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/** The string values, at any depth, of the keys `name` matches. */
function stringsUnder(value: unknown, name: RegExp): string[] {
  if (!value || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, v]) => (typeof v === 'string' && name.test(key) ? [v] : stringsUnder(v, name)));
}
