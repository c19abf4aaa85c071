import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Answer, Card, CardInput } from '../cards/model.js';
import type { Routes } from '../routing/rules.js';

// The relay as the client commands see it: where it is, which token opens it, and one
// method per API route. Errors come back as ApiError (the relay answered with an error)
// or UnreachableError (no answer at all), so callers can tell "refused" from "retry".

export interface RelayTarget {
  /** Base URL, always ending in "/". */
  url: string;
  token: string;
  /** Where the token came from, for error messages: "ASKRELAY_TOKEN" or a file path. */
  tokenSource: string;
}

/** GET /api/nodes, as the relay returns it. */
export interface NodeList {
  node: string;
  store: string;
  nodes: { id: string; url?: string; startedAt: string; heartbeatAt: string; holds: Record<string, number>; leases: string[] }[];
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export class UnreachableError extends Error {
  constructor(
    message: string,
    /** What went wrong, without advice: "connect ECONNREFUSED 127.0.0.1:7070". */
    readonly reason: string,
  ) {
    super(message);
    this.name = 'UnreachableError';
  }
}

/** Finds the relay from --url / ASKRELAY_URL and the token from ASKRELAY_TOKEN / the data folder. */
export function findRelay(urlFlag: string | undefined, env: NodeJS.ProcessEnv = process.env): RelayTarget {
  const raw = urlFlag?.trim() || env.ASKRELAY_URL?.trim() || `http://127.0.0.1:${env.ASKRELAY_PORT?.trim() || '7070'}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`"${raw}" is not a URL; give the relay's address like http://127.0.0.1:7070 (--url or ASKRELAY_URL).`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`"${raw}" is not an http(s) URL (--url or ASKRELAY_URL).`);
  }
  if (!url.pathname.endsWith('/')) url.pathname += '/';

  const fromEnv = env.ASKRELAY_TOKEN?.trim();
  if (fromEnv) return { url: url.href, token: fromEnv, tokenSource: 'ASKRELAY_TOKEN' };
  const file = join(resolve(env.ASKRELAY_DATA?.trim() || '.askrelay'), 'token');
  const fromFile = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  if (fromFile) return { url: url.href, token: fromFile, tokenSource: file };
  throw new Error(
    `no relay token: set ASKRELAY_TOKEN, or run where the relay keeps its data (looked for ${file}; set ASKRELAY_DATA to the relay's --data folder).`,
  );
}

interface RequestOptions {
  json?: unknown;
  timeoutMs?: number;
}

const REQUEST_TIMEOUT_MS = 30_000;
/** Slack on top of a long poll's own timeout before the client gives up on the connection. */
const POLL_SLACK_MS = 15_000;

export class RelayClient {
  constructor(readonly target: RelayTarget) {}

  createCard(input: CardInput): Promise<Card> {
    return this.call('POST', 'api/cards', { json: input }) as Promise<Card>;
  }

  /** Up to 10,000 cards (the relay's largest page; its default is 500), oldest first. */
  async listCards(status?: string): Promise<Card[]> {
    const query = `?limit=10000${status ? `&status=${encodeURIComponent(status)}` : ''}`;
    const body = (await this.call('GET', `api/cards${query}`)) as { cards: Card[] };
    return body.cards;
  }

  getCard(id: string): Promise<Card> {
    return this.call('GET', `api/cards/${encodeURIComponent(id)}`) as Promise<Card>;
  }

  /** `late`: the answer to a card that expired or was cancelled, kept as its late answer. */
  answer(id: string, answers: Answer, { late = false } = {}): Promise<Card> {
    return this.call('POST', `api/cards/${encodeURIComponent(id)}/answer`, { json: { answers, ...(late ? { late } : {}) } }) as Promise<Card>;
  }

  skip(id: string): Promise<Card> {
    return this.call('POST', `api/cards/${encodeURIComponent(id)}/skip`) as Promise<Card>;
  }

  /** A plain-text reply the relay reads as the answer (POST /api/cards/:id/reply). */
  reply(id: string, text: string, { late = false } = {}): Promise<Card> {
    return this.call('POST', `api/cards/${encodeURIComponent(id)}/reply`, { json: { text, ...(late ? { late } : {}) } }) as Promise<Card>;
  }

  /** GET /api/nodes: the nodes sharing the relay's store. */
  nodes(): Promise<NodeList> {
    return this.call('GET', 'api/nodes') as Promise<NodeList>;
  }

  users(): Promise<{ users: { name: string; createdAt: string; links: string[] }[] }> {
    return this.call('GET', 'api/users') as Promise<{ users: { name: string; createdAt: string; links: string[] }[] }>;
  }

  linkUser(name: string, link: string): Promise<{ name: string; links: string[] }> {
    return this.call('POST', `api/users/${encodeURIComponent(name)}/links`, { json: { link } }) as Promise<{ name: string; links: string[] }>;
  }

  unlinkUser(name: string, link: string): Promise<unknown> {
    return this.call('DELETE', `api/users/${encodeURIComponent(name)}/links/${encodeURIComponent(link)}`);
  }

  routes(): Promise<{ routes: Routes }> {
    return this.call('GET', 'api/routes') as Promise<{ routes: Routes }>;
  }

  putRoutes(routes: Routes): Promise<{ routes: Routes }> {
    return this.call('PUT', 'api/routes', { json: { routes } }) as Promise<{ routes: Routes }>;
  }

  addUser(name: string): Promise<{ name: string; createdAt: string; token: string }> {
    return this.call('POST', 'api/users', { json: { name } }) as Promise<{ name: string; createdAt: string; token: string }>;
  }

  removeUser(name: string): Promise<{ ok: true; name: string }> {
    return this.call('DELETE', `api/users/${encodeURIComponent(name)}`) as Promise<{ ok: true; name: string }>;
  }

  /**
   * Long poll: the card once it is no longer pending (`late`: once it has an answer, a late
   * one included), or undefined when `seconds` pass first. The relay records the answer as
   * delivered to `askrelay ask`.
   */
  async wait(id: string, seconds: number, { late = false } = {}): Promise<Card | undefined> {
    const path = `api/cards/${encodeURIComponent(id)}/wait?timeout=${seconds}&client=ask${late ? '&late=1' : ''}`;
    const body = await this.call('GET', path, { timeoutMs: seconds * 1000 + POLL_SLACK_MS });
    return (body ?? undefined) as Card | undefined;
  }

  protected async call(method: string, path: string, options: RequestOptions = {}): Promise<unknown> {
    const url = new URL(path, this.target.url);
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.target.token}`,
          accept: 'application/json',
          // Recorded with answers and skips as answeredBy.surface.
          'x-askrelay-surface': 'cli',
          ...(options.json !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: options.json !== undefined ? JSON.stringify(options.json) : undefined,
        signal: AbortSignal.timeout(options.timeoutMs ?? REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      const reason = describeFailure(err);
      throw new UnreachableError(unreachableText(this.target.url, reason), reason);
    }
    let text: string;
    try {
      text = await response.text();
    } catch (err) {
      const reason = describeFailure(err);
      throw new UnreachableError(`lost the relay at ${this.target.url} mid-answer (${reason}).`, reason);
    }
    if (response.status === 204) return undefined;
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (response.ok) {
      if (body === undefined) throw new ApiError(response.status, 'bad_response', `the relay at ${this.target.url} sent something that is not JSON; is --url right?`, text);
      return body;
    }
    throw this.apiError(response.status, body, text);
  }

  private apiError(status: number, body: unknown, text: string): ApiError {
    const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    const code = typeof error?.code === 'string' ? error.code : `http_${status}`;
    let message = typeof error?.message === 'string' ? error.message : `the relay answered HTTP ${status}${text ? `: ${text.slice(0, 200)}` : ''}`;
    if (status === 401) {
      message = tokenRefusedText(this.target.tokenSource);
    }
    return new ApiError(status, code, message, body);
  }
}

/** The relay gave no answer at `url`; `reason` says what went wrong ("connect ECONNREFUSED …"). */
export function unreachableText(url: string, reason: string): string {
  return `cannot reach the relay at ${url} (${reason}); is "askrelay serve" running there? Set --url or ASKRELAY_URL.`;
}

/** The relay refused the token from `tokenSource`; with `url`, "the relay at <url> refused …". */
export function tokenRefusedText(tokenSource: string, url?: string): string {
  const relay = url ? `the relay at ${url}` : 'the relay';
  return `${relay} refused the token from ${tokenSource}; use the token "askrelay serve" printed (kept in its data folder's token file).`;
}

/** What went wrong with a request that got no answer ("connect ECONNREFUSED …", "no response in time"), without advice. */
export function describeFailure(err: unknown): string {
  const e = err as Error & { cause?: Error & { code?: string } };
  if (e?.name === 'TimeoutError') return 'no response in time';
  const cause = e?.cause;
  if (cause?.code && cause.message) return cause.message;
  return cause?.message || e?.message || String(err);
}
