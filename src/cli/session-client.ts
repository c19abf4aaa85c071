import type { Card } from '../cards/model.js';
import type { Session, StartSession } from '../sessions/model.js';
import { ApiError, UnreachableError, type RelayTarget } from './client.js';

// The sessions routes as the session commands see them. Errors come back the way
// RelayClient reports them: ApiError with the relay's own message when it refused,
// UnreachableError when it did not answer at all.

const REQUEST_TIMEOUT_MS = 30_000;

export class SessionClient {
  constructor(readonly target: RelayTarget) {}

  start(input: StartSession): Promise<Session> {
    return this.call('POST', 'api/sessions', input) as Promise<Session>;
  }

  async list(): Promise<Session[]> {
    return ((await this.call('GET', 'api/sessions')) as { sessions: Session[] }).sessions;
  }

  /** The session with its whole transcript. */
  get(id: string): Promise<Session> {
    return this.call('GET', `api/sessions/${encodeURIComponent(id)}`) as Promise<Session>;
  }

  send(id: string, text: string): Promise<Session> {
    return this.call('POST', `api/sessions/${encodeURIComponent(id)}/messages`, { text }) as Promise<Session>;
  }

  stop(id: string): Promise<Session> {
    return this.call('DELETE', `api/sessions/${encodeURIComponent(id)}`) as Promise<Session>;
  }

  /** The session's cards that wait for an answer. */
  async pendingCards(sessionId: string): Promise<Card[]> {
    const body = (await this.call('GET', `api/cards?status=pending&sessionId=${encodeURIComponent(sessionId)}`)) as { cards: Card[] };
    return body.cards;
  }

  private async call(method: string, path: string, json?: unknown): Promise<unknown> {
    let response: Response;
    let text: string;
    try {
      response = await fetch(new URL(path, this.target.url), {
        method,
        headers: {
          authorization: `Bearer ${this.target.token}`,
          accept: 'application/json',
          'x-askrelay-surface': 'cli',
          ...(json !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: json !== undefined ? JSON.stringify(json) : undefined,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      text = await response.text();
    } catch (err) {
      const reason = failure(err);
      throw new UnreachableError(`cannot reach the relay at ${this.target.url} (${reason}); is "askrelay serve" running there? Set --url or ASKRELAY_URL.`, reason);
    }
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    if (response.ok && body !== undefined) return body;
    if (response.ok) throw new ApiError(response.status, 'bad_response', `the relay at ${this.target.url} sent something that is not JSON; is --url right?`, text);
    const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    const code = typeof error?.code === 'string' ? error.code : `http_${response.status}`;
    let message = typeof error?.message === 'string' ? error.message : `the relay answered HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`;
    if (response.status === 401) {
      message = `the relay refused the token from ${this.target.tokenSource}; use the token "askrelay serve" printed (kept in its data folder's token file).`;
    }
    throw new ApiError(response.status, code, message, body);
  }
}

function failure(err: unknown): string {
  const e = err as Error & { cause?: Error & { code?: string } };
  if (e?.name === 'TimeoutError') return 'no response in time';
  return e?.cause?.message || e?.message || String(err);
}
