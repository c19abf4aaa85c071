import type { ChannelId, ChannelsConfig } from '../../channels/config.js';
import type { ProviderInfo } from '../../sessions/providers.js';
import { unreachableText } from '../client.js';
import { result, type CheckResult } from './report.js';

// askrelay doctor's view of the services the relay talks to (pure): which request tells
// whether a provider's endpoint or a chat channel's credentials work, and what its answer
// means. The probes send the requests; nothing here does I/O.

/** What one HTTP request got: any response at all, or the reason there was none. */
export type HttpAnswer = { answered: true; status: number; body: unknown } | { answered: false; reason: string };

export interface ProbeRequest {
  url: string;
  init: RequestInit;
}

/** A check that needs one request before its result is known. */
export interface PendingCheck {
  request: ProbeRequest;
  finish(answer: HttpAnswer): CheckResult;
}

/**
 * A URL for display: its password as ***, no query (either may carry a key), and for a value
 * that is no URL, a short cut of it.
 */
export function shownUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    url.search = '';
    url.hash = '';
    return url.href;
  } catch {
    return JSON.stringify(raw.length > 40 ? `${raw.slice(0, 40)}…` : raw);
  }
}

/**
 * The harmless GET that shows an API answers: its model list. Anthropic-style bases are
 * the host (…/v1/models below it); OpenAI-style bases end in their version (…/v1, then /models).
 */
export function modelsUrl(base: URL): string {
  const path = base.pathname.replace(/\/+$/, '');
  return `${base.origin}${path}${/\/v\d+$/.test(path) ? '' : '/v1'}/models`;
}

/**
 * A provider's variables, by the SDKs' naming: *_BASE_URL and *_API_KEY (the registry lists
 * them, src/sessions/providers.ts). Without both set the verdict is known at once; with both,
 * the base URL must answer. The key is never sent: any HTTP status means the endpoint is there.
 */
export function providerCheck(provider: Pick<ProviderInfo, 'id' | 'name' | 'variables'>, env: NodeJS.ProcessEnv): CheckResult | PendingCheck {
  const id = `provider:${provider.id}`;
  const r = (status: CheckResult['status'], message: string) => result(id, provider.id, status, message);
  const baseVar = provider.variables.find((v) => v.endsWith('_BASE_URL'));
  const keyVar = provider.variables.find((v) => v.endsWith('_API_KEY'));
  const base = baseVar ? env[baseVar]?.trim() : undefined;
  const key = keyVar ? env[keyVar]?.trim() : undefined;
  if (!baseVar || !keyVar) return r('info', `Declares no base URL and key variables (${provider.variables.join(', ') || 'none'}); nothing to check.`);
  if (!base && !key) return r('info', `Not configured (${baseVar} and ${keyVar} are unset).`);
  if (!key) return r('fail', `${baseVar} is set but ${keyVar} is not: ${provider.name} sessions would have no key. Set ${keyVar}, or unset ${baseVar}.`);
  if (!base) return r('info', `${keyVar} is set and ${baseVar} is not, so sessions use ${provider.name}'s default endpoint, which doctor does not call.`);
  let url: URL;
  try {
    url = new URL(base);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('not http');
  } catch {
    return r('fail', `${baseVar} ${shownUrl(base)} is not an http(s) URL; give the API's address, like https://api.example.com/v1.`);
  }
  const target = modelsUrl(url);
  return {
    request: { url: target, init: { method: 'GET', headers: { accept: 'application/json' } } },
    finish: (answer) =>
      answer.answered
        ? r('ok', `${baseVar} ${shownUrl(base)} answers (HTTP ${answer.status} to GET ${shownUrl(target)}); ${keyVar} is set.`)
        : r('fail', `${baseVar} ${shownUrl(base)} does not answer (${blockedPort(answer.reason, url)}); check the address or unset it.`),
  };
}

/** fetch's "bad port" (https://fetch.spec.whatwg.org/#port-blocking), said so that it is understood: the SDKs use fetch too. */
const blockedPort = (reason: string, url: URL) =>
  reason === 'bad port' ? `fetch, which the provider SDKs use, refuses port ${url.port}: it is on the fetch standard's list of blocked ports` : reason;

interface Platform {
  name: string;
  /** The harmless call, as named in sentences. */
  call: string;
  /** The API root the channel uses, and the setting that changes it. */
  root(config: ChannelsConfig): string;
  rootSetting: string;
  request(root: string, token: string): ProbeRequest;
  /** Who the platform says the token belongs to, when the answer is a success. */
  who(status: number, body: any): string | undefined;
  /** The platform's own words for a refusal, when the answer is one. */
  refused(status: number, body: any): string | undefined;
  tokenHint: string;
}

const trimmed = (url: string) => url.replace(/\/+$/, '');

// The platforms' default roots, as their clients in src/channels/<platform>/client.ts have them
// (not imported: those modules load the platforms' libraries).
export const PLATFORMS: Record<ChannelId, Platform> = {
  telegram: {
    name: 'Telegram',
    call: 'getMe',
    root: (c) => trimmed(c.telegram?.apiRoot ?? 'https://api.telegram.org'),
    rootSetting: 'ASKRELAY_TELEGRAM_API_ROOT',
    request: (root, token) => ({ url: `${root}/bot${token}/getMe`, init: { method: 'GET' } }),
    who: (status, body) => (status === 200 && body?.ok === true ? `bot @${body.result?.username ?? body.result?.first_name ?? '?'}` : undefined),
    // A token not shaped like one is 404 Not Found at Telegram, in its own {ok:false} body.
    refused: (status, body) => (status === 401 || (status === 404 && body?.ok === false) ? `${status} ${body?.description ?? ''}`.trim() : undefined),
    tokenHint: 'the token @BotFather gave the bot, like 123456789:AA…',
  },
  slack: {
    name: 'Slack',
    call: 'auth.test',
    root: (c) => `${trimmed(c.slack?.apiUrl ?? 'https://slack.com/api')}/`,
    rootSetting: 'ASKRELAY_SLACK_API_URL',
    request: (root, token) => ({
      url: `${root}auth.test`,
      init: { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' }, body: '' },
    }),
    who: (status, body) => (status === 200 && body?.ok === true ? `${body.user ?? body.user_id ?? '?'} in ${body.team ?? body.team_id ?? '?'}` : undefined),
    refused: (status, body) =>
      status === 200 && ['not_authed', 'invalid_auth', 'account_inactive', 'token_revoked', 'token_expired'].includes(body?.error) ? String(body.error) : undefined,
    tokenHint: 'the app\'s bot token, xoxb-…',
  },
  discord: {
    name: 'Discord',
    call: 'GET /users/@me',
    root: (c) => trimmed(c.discord?.apiUrl ?? 'https://discord.com/api').replace(/\/v\d+$/, ''),
    rootSetting: 'ASKRELAY_DISCORD_API_URL',
    request: (root, token) => ({ url: `${root}/v10/users/@me`, init: { method: 'GET', headers: { authorization: `Bot ${token}` } } }),
    who: (status, body) => (status === 200 && body?.id ? `bot ${body.username ?? body.id}` : undefined),
    refused: (status, body) => (status === 401 ? String(body?.message ?? '401: Unauthorized') : undefined),
    tokenHint: 'the bot\'s token from the Developer Portal, without "Bot " in front',
  },
  mattermost: {
    name: 'Mattermost',
    call: 'GET /api/v4/users/me',
    root: (c) => trimmed(c.mattermost?.url ?? ''),
    rootSetting: 'ASKRELAY_MATTERMOST_URL',
    request: (root, token) => ({ url: `${root}/api/v4/users/me`, init: { method: 'GET', headers: { authorization: `Bearer ${token}` } } }),
    who: (status, body) => (status === 200 && body?.id ? `@${body.username ?? body.id}` : undefined),
    refused: (status, body) => (status === 401 ? `401 ${body?.message ?? ''}`.trim() : undefined),
    tokenHint: 'a bot account\'s or personal access token',
  },
};

/** A channel switched on: one call with its token, and what the platform's answer means. */
export function channelCheck(id: ChannelId, config: ChannelsConfig): PendingCheck {
  const platform = PLATFORMS[id];
  const r = (status: CheckResult['status'], message: string) => result(`channel:${id}`, id, status, message);
  const root = platform.root(config);
  const token = config[id]?.token ?? '';
  const tokenSetting = `ASKRELAY_${id.toUpperCase()}_TOKEN (or ${id}.token in the channels file)`;
  return {
    request: platform.request(root, token),
    finish(answer) {
      const at = `${platform.name} at ${shownUrl(root)}`;
      if (!answer.answered) return r('fail', `Cannot reach ${at} (${answer.reason}); check ${platform.rootSetting} and the network.`);
      const { status, body } = answer;
      const who = platform.who(status, body);
      if (who) return r('ok', `${platform.name} accepts the token (${platform.call}): ${who}.`);
      const refusal = platform.refused(status, body);
      if (refusal) return r('fail', `${platform.name} refused the token (${refusal}) on ${platform.call}: check ${tokenSetting}; it is ${platform.tokenHint}.`);
      if (status === 429 || status >= 500) return r('warn', `${at} answered HTTP ${status} to ${platform.call}: the platform is busy or having trouble; the relay retries its posts. Run doctor again later.`);
      // The body may quote the request's path, and Telegram's path holds the token.
      const said = typeof body === 'object' && body ? ` ${(token ? JSON.stringify(body).split(token).join('***') : JSON.stringify(body)).slice(0, 120)}` : '';
      return r('fail', `${at} answered HTTP ${status}${said} to ${platform.call}, not what ${platform.name} answers: check ${platform.rootSetting}.`);
    },
  };
}

/** What the relay's GET /api/health says, judged against what this command expects of it. */
export function healthResult(url: string, answer: HttpAnswer, expected: { version: string; store: 'sqlite' | 'postgres'; data: string }): CheckResult {
  const r = (status: CheckResult['status'], message: string) => result('relay', 'relay', status, message);
  if (!answer.answered) return r('fail', unreachableText(url, answer.reason));
  const body = answer.body as { ok?: unknown; version?: unknown; store?: unknown; node?: unknown; error?: { code?: unknown } } | undefined;
  if (answer.status === 503 && body?.error?.code === 'store_unavailable') {
    return r('fail', `The relay at ${url} answers, but its database does not (store_unavailable): check that PostgreSQL runs and the relay may reach it; the relay serves again once it answers.`);
  }
  if (answer.status !== 200 || body?.ok !== true || typeof body.version !== 'string') {
    return r('fail', `${url} answered HTTP ${answer.status} to GET /api/health, not as an askrelay relay does: is --url (ASKRELAY_URL) the relay's address?`);
  }
  const store = typeof body.store === 'string' ? body.store : undefined;
  const facts = `The relay at ${url} answers: askrelay ${body.version}${store ? `, store ${store}${typeof body.node === 'string' ? `, node ${body.node}` : ''}` : ''}`;
  if (store && store !== expected.store) {
    const here = expected.store === 'postgres' ? 'a database is configured here' : `no database is configured here, so the store checks look at the SQLite file in ${expected.data}`;
    const fix = store === 'postgres' ? 'give --database (ASKRELAY_DATABASE_URL) the relay\'s database' : 'drop --database (ASKRELAY_DATABASE_URL) and give --data the relay\'s folder';
    return r('warn', `${facts}, but ${here}: ${fix} to check what the relay uses.`);
  }
  if (body.version !== expected.version) {
    return r('warn', `${facts}, but this askrelay is ${expected.version}: run doctor from the relay's own installation (the checks follow this version's rules).`);
  }
  return r('ok', `${facts}.`);
}
