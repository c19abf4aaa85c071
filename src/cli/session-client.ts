import type { Card } from '../cards/model.js';
import type { Session, StartSession } from '../sessions/model.js';
import type { ProviderInfo } from '../sessions/providers.js';
import { RelayClient } from './client.js';

// The sessions routes as the session commands see them, on RelayClient's requests and
// errors (ApiError with the relay's own message, UnreachableError when it did not answer).
export class SessionClient extends RelayClient {
  start(input: StartSession): Promise<Session> {
    return this.call('POST', 'api/sessions', { json: input }) as Promise<Session>;
  }

  async list(): Promise<Session[]> {
    return ((await this.call('GET', 'api/sessions')) as { sessions: Session[] }).sessions;
  }

  /** The session with its whole transcript. */
  get(id: string): Promise<Session> {
    return this.call('GET', `api/sessions/${encodeURIComponent(id)}`) as Promise<Session>;
  }

  send(id: string, text: string): Promise<Session> {
    return this.call('POST', `api/sessions/${encodeURIComponent(id)}/messages`, { json: { text } }) as Promise<Session>;
  }

  stop(id: string): Promise<Session> {
    return this.call('DELETE', `api/sessions/${encodeURIComponent(id)}`) as Promise<Session>;
  }

  /** GET /api/providers: the providers the relay runs sessions on, asked briefly (for help). */
  async providers(timeoutMs: number): Promise<ProviderInfo[]> {
    return ((await this.call('GET', 'api/providers', { timeoutMs })) as { providers: ProviderInfo[] }).providers;
  }

  /** The session's cards that wait for an answer. */
  async pendingCards(sessionId: string): Promise<Card[]> {
    const body = (await this.call('GET', `api/cards?status=pending&sessionId=${encodeURIComponent(sessionId)}`)) as { cards: Card[] };
    return body.cards;
  }
}
