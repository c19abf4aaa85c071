import { join, dirname, resolve } from 'node:path';
import { loadRoutes } from '../../routing/open-router.js';
import { channelsConfig, enabledChannels, type ChannelsConfig } from '../../channels/config.js';
import { serveConfig } from '../../config.js';
import { pushConfigFromEnv } from '../../push/push-config.js';
import { VAPID_FILE } from '../../push/vapid-keys.js';
import type { ProviderInfo } from '../../sessions/providers.js';
import { AUDIT_KEY_FILE, shortSecret, TOKEN_FILE } from '../../store/data-folder.js';
import { MIGRATIONS } from '../../store/postgres/migrations.js';
import { DB_FILE } from '../../store/stores.js';
import { folderLockState } from '../../store/folder-lock.js';
import { VERSION } from '../../version.js';
import { ApiError, findRelay, RelayClient, tokenRefusedText, type RelayTarget } from '../client.js';
import { channelCheck, healthResult, providerCheck, shownUrl } from './endpoints.js';
import { expectedSqliteTables, fileFacts, folderFacts, freeSpace, httpProbe, postgresFacts, sqliteFacts } from './probes.js';
import { result, type CheckResult } from './report.js';
import { auditKeyResults, diskResult, folderResults, lockResult, migrationResults, modeResult, pushKeyResults, sqliteResults, tokenFileResults } from './verdicts.js';

// askrelay doctor's checks, run: the local ones (settings, the data folder and its files,
// the disk) while the network ones (the relay, the store, providers, chat channels) are in
// flight together, so the whole run takes about one --timeout at worst.

export interface DoctorOptions {
  /** The environment, with ASKRELAY_DATA and ASKRELAY_DATABASE_URL as the flags set them. */
  env: NodeJS.ProcessEnv;
  urlFlag?: string;
  dataDir: string;
  databaseUrl?: string;
  timeoutMs: number;
}

/** The relay token route that only the relay token (not an agent's) may read. */
class DoctorClient extends RelayClient {
  humansOnlyRoute(timeoutMs: number): Promise<unknown> {
    return this.call('GET', 'api/nodes', { timeoutMs });
  }
}

export async function runChecks(o: DoctorOptions): Promise<CheckResult[]> {
  const onPostgres = !!o.databaseUrl;
  const { results: settings, providers, channels } = await settingsResults(o);
  // The network checks go out together; the local ones run while they are in flight.
  const relay = relayResults(o, onPostgres);
  const services = serviceResults(o, providers, channels);
  const postgres = onPostgres ? postgresResults(o.databaseUrl!, o.timeoutMs) : undefined;

  const folder = folderFacts(o.dataDir);
  const folderMode = folder.mode ?? 0o700;
  const file = (name: string, read = false) => fileFacts(join(o.dataDir, name), read);
  const tokenUsed = onPostgres ? 'database' : o.env.ASKRELAY_TOKEN?.trim() ? 'env' : 'file';
  const local = [
    ...folderResults(folder, onPostgres),
    ...(folder.exists && folder.isDirectory ? [lockResult(o.dataDir, folderLockState(o.dataDir))] : []),
    ...tokenFileResults(file(TOKEN_FILE, true), folderMode, tokenUsed),
    ...auditKeyResults(file(AUDIT_KEY_FILE, true), folderMode, !!o.env.ASKRELAY_AUDIT_KEY?.trim(), onPostgres),
    ...channelsFileResults(o),
    routesResult(o),
  ];
  let store: CheckResult[];
  let push: CheckResult[];
  if (postgres) {
    const db = await postgres;
    store = db.results;
    push = db.reachable
      ? pushKeyResults(file(VAPID_FILE, true), folderMode, true, db.vapid)
      : [result('push-keys', 'push keys', 'info', 'Not checked: they are kept in the database, which does not answer.')];
  } else if (!folder.exists) {
    // The folder's line says what to do; without it the SQLite store has nothing to look at.
    store = [result('store', 'store', 'info', 'Not checked: there is no data folder.')];
    push = [result('push-keys', 'push keys', 'info', 'Not checked: there is no data folder.')];
  } else {
    store = sqliteStoreResults(o.dataDir, folderMode);
    push = pushKeyResults(file(VAPID_FILE, true), folderMode, false);
  }
  const space = freeSpace(o.dataDir);
  const disk = 'free' in space ? diskResult(space.where, space.free) : result('disk', 'free disk', 'warn', `Cannot tell the free space on ${space.where} (${space.error}).`);
  return [...settings, ...(await relay), ...local, ...store, ...push, disk, ...(await services)];
}

/** Each provider's endpoint and each chat channel's credentials, one request each, side by side. */
async function serviceResults(o: DoctorOptions, providers: ProviderInfo[], channels: ChannelsConfig | Error): Promise<CheckResult[]> {
  const on = channels instanceof Error ? [] : enabledChannels(channels);
  const checks = [...providers.map((p) => providerCheck(p, o.env)), ...on.map((id) => channelCheck(id, channels as ChannelsConfig))];
  const done = await Promise.all(checks.map((c) => ('request' in c ? httpProbe(c.request, o.timeoutMs).then((answer) => c.finish(answer)) : c)));
  if (channels instanceof Error) return [...done, result('channel', 'channels', 'fail', `${channels.message} "askrelay serve" refuses to start with it; see docs/channels.md.`)];
  if (!on.length) return [...done, result('channel', 'channels', 'info', 'No chat channel is switched on (ASKRELAY_TELEGRAM_TOKEN, ASKRELAY_SLACK_TOKEN, … or a channels file; docs/channels.md).')];
  return done;
}

/** What "askrelay serve" would refuse at start; also the provider list and the channels it reads. */
async function settingsResults(o: DoctorOptions): Promise<{ results: CheckResult[]; providers: ProviderInfo[]; channels: ChannelsConfig | Error }> {
  const fail = (message: string) => result('settings', 'settings', 'fail', `${message}${/[.!?]$/.test(message) ? '' : '.'} "askrelay serve" refuses to start with it.`);
  const out: CheckResult[] = [];
  let waitMs = 8 * 3600_000;
  try {
    waitMs = serveConfig({ data: o.dataDir }, o.env).waitMs;
  } catch (err) {
    out.push(fail((err as Error).message));
  }
  // The registry as plain data, like "askrelay serve --help" (the CLI never imports providers/).
  const { registry } = await import('../../start.js');
  let providers: ProviderInfo[];
  try {
    providers = registry.describe(o.env, waitMs);
  } catch (err) {
    out.push(fail((err as Error).message));
    const withoutWaits = Object.fromEntries(Object.entries(o.env).filter(([name]) => !registry.waits.some((w) => w.variable === name)));
    providers = registry.describe(withoutWaits, waitMs);
  }
  try {
    pushConfigFromEnv(o.env);
  } catch (err) {
    out.push(fail((err as Error).message));
  }
  const token = o.env.ASKRELAY_TOKEN?.trim();
  const tokenShort = token && shortSecret('ASKRELAY_TOKEN', 'token', token, 'Make one with "openssl rand -base64 24", or unset it to have one made and kept in the data folder.');
  if (tokenShort) out.push(fail(tokenShort));
  const key = o.env.ASKRELAY_AUDIT_KEY?.trim();
  const keyShort = key && shortSecret('ASKRELAY_AUDIT_KEY', 'key', key, 'Make one with "openssl rand -base64 32", or unset it to use <data>/audit.key.');
  if (keyShort) out.push(fail(keyShort));
  let channels: ChannelsConfig | Error;
  try {
    channels = channelsConfig(o.env, o.dataDir);
  } catch (err) {
    channels = err as Error;
  }
  if (!out.length) out.push(result('settings', 'settings', 'ok', 'The ASKRELAY_* settings "askrelay serve" reads are valid.'));
  return { results: out, providers, channels };
}

/** GET /api/health (no token needed), then one request only the relay token may make. */
async function relayResults(o: DoctorOptions, onPostgres: boolean): Promise<CheckResult[]> {
  const token = (status: CheckResult['status'], message: string) => result('token', 'relay token', status, message);
  let target: RelayTarget | undefined;
  let noToken: string | undefined;
  try {
    target = findRelay(o.urlFlag, o.env);
  } catch (err) {
    noToken = (err as Error).message;
    try {
      // Only for the address, which health needs without any token: this one is never sent.
      target = findRelay(o.urlFlag, { ...o.env, ASKRELAY_TOKEN: 'address-only' });
    } catch (badUrl) {
      return [result('relay', 'relay', 'fail', (badUrl as Error).message), token('info', 'Not checked: there is no relay address.')];
    }
  }
  const health = await httpProbe({ url: new URL('api/health', target.url).href, init: { method: 'GET' } }, o.timeoutMs);
  const relay = healthResult(target.url, health, { version: VERSION, store: onPostgres ? 'postgres' : 'sqlite', data: o.dataDir });
  if (noToken) return [relay, token('fail', noToken)];
  if (!health.answered) return [relay, token('info', 'Not checked: the relay did not answer.')];
  try {
    await new DoctorClient(target).humansOnlyRoute(o.timeoutMs);
    return [relay, token('ok', `The relay accepts the token from ${target.tokenSource}.`)];
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return [relay, token('fail', tokenRefusedText(target.tokenSource, target.url))];
    if (err instanceof ApiError && err.code === 'human_only') {
      return [relay, token('warn', `The token from ${target.tokenSource} is an agent's (a session's), not the relay token: the human's commands (answering approvals, channels, nodes) are refused with it. Use the token "askrelay serve" printed.`)];
    }
    // Past the token check (a route this relay lacks, or one that failed): the token itself was taken.
    if (err instanceof ApiError) return [relay, token('ok', `The relay accepts the token from ${target.tokenSource}.`)];
    return [relay, token('fail', `Could not check the token: ${(err as Error).message}`)];
  }
}

/** The channels file holds bot tokens and signing secrets: 0600 like the relay's own secrets. */
function channelsFileResults(o: DoctorOptions): CheckResult[] {
  const named = o.env.ASKRELAY_CHANNELS?.trim();
  const facts = fileFacts(named ? resolve(named) : join(o.dataDir, 'channels.json'));
  if (!facts.exists) return [];
  const folderMode = folderFacts(dirname(facts.path)).mode ?? 0o700;
  const mode = modeResult('channels-file', 'channels file', facts, folderMode, 'the chat tokens in it');
  return [mode ?? result('channels-file', 'channels file', 'ok', `${facts.path} is 0600.`)];
}

/** The routes file, read as `askrelay serve` reads it (a mistake stops serve). */
function routesResult(o: DoctorOptions): CheckResult {
  try {
    const { file, routes } = loadRoutes(o.env, o.dataDir);
    if (!routes) return result('routes', 'routes', 'info', 'No routes file: every card goes to everyone (docs/routing.md), unless routes were set with PUT /api/routes.');
    return result('routes', 'routes', 'ok', `${routes.length} rule${routes.length === 1 ? '' : 's'} in ${file.named}.`);
  } catch (err) {
    return result('routes', 'routes', 'fail', `${(err as Error).message} "askrelay serve" refuses to start with it; see docs/routing.md.`);
  }
}

function sqliteStoreResults(dataDir: string, folderMode: number): CheckResult[] {
  const file = join(dataDir, DB_FILE);
  const modes = [file, `${file}-wal`, `${file}-shm`].flatMap((path) => modeResult('store', 'store', fileFacts(path), folderMode, 'every card, answer and the audit log') ?? []);
  return [sqliteResults(file, sqliteFacts(file), expectedSqliteTables()), ...modes];
}

async function postgresResults(url: string, timeoutMs: number): Promise<{ reachable: boolean; vapid?: string; results: CheckResult[] }> {
  const where = shownUrl(url);
  const facts = await postgresFacts(url, timeoutMs);
  if (!facts.reachable) {
    return { reachable: false, results: [result('store', 'store', 'fail', `The database ${where} does not answer (${facts.reason}): check ASKRELAY_DATABASE_URL (--database), that PostgreSQL runs, and that it lets this user in.`)] };
  }
  return { reachable: true, vapid: facts.vapid, results: [migrationResults(`The database ${where}`, facts.applied, MIGRATIONS)] };
}
