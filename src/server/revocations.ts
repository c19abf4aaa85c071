import type { ServerResponse } from 'node:http';
import { RESYNC, type Cluster } from '../cluster/cluster.js';
import { pause, systemClock } from '../relay/clock.js';
import type { RelayEvents } from '../relay/events.js';
import type { SessionStatus } from '../sessions/model.js';
import { CLOSED } from '../sessions/session-book.js';

// A credential taken back (a person removed, a page login ended, a session stopped) ends what
// it holds open, not only what it asks next: its event streams, long polls and MCP streams,
// on every node. Each long-lived response is kept here with its credential's keys while it is
// open (connection-limit.ts, the one place every such response passes). A revocation ends
// those whose keys it names, here at once and on the other nodes through the database:
// a person's key and a login's travel with `credential.revoked`; a session's end travels
// as the session.updated every node hears anyway. A node that may have missed some (its
// connection to the others was back after a loss) checks every open credential again.

const REVOKED = 'credential.revoked';
const PUBLISH_TRIES = 5;
const PUBLISH_RETRY_MS = 200;

/** What a revocation names a credential by. */
export const revocationKey = {
  person: (name: string) => `person:${name}`,
  login: (key: string) => `login:${key}`,
  session: (id: string) => `session:${id}`,
};

/** What signed a request in, as auth.ts's requireToken found it. */
export interface Credential {
  /** What revoking it names (none: the relay token, which only a restart with another one takes back). */
  readonly keys: readonly string[];
  /** How many revocations this node had heard when the request was signed in. */
  readonly heard: number;
  /** Whether the request's token or cookie still signs it in as the same principal. */
  stillValid(): Promise<boolean>;
}

interface Held {
  credential: Credential;
  end(): void;
}

export interface RevocationOptions {
  cluster?: Pick<Cluster, 'publish' | 'subscribe'>;
  /** Where session.updated comes from (this node's and the others'). */
  events?: Pick<RelayEvents, 'subscribe'>;
  log?: (line: string) => void;
  /** The first wait before announcing again (then twice, three times… as long); default 200 ms. */
  retryMs?: number;
}

export class Revocations {
  private readonly held = new Set<Held>();
  private heardCount = 0;
  private stopListening = () => {};

  constructor(private readonly options: RevocationOptions = {}) {}

  /** How many revocations this node has heard (a request stamps it when signed in). */
  get heard(): number {
    return this.heardCount;
  }

  /** Keeps `end` while `res` is open: called once, when the credential that opened it is revoked. */
  hold(res: ServerResponse, credential: Credential, end: () => void): void {
    if (res.closed || !credential.keys.length) return;
    const held: Held = { credential, end };
    this.held.add(held);
    res.once('close', () => this.held.delete(held));
    // A revocation heard between signing in and now may have been this one's.
    if (credential.heard !== this.heardCount) void this.check(held);
  }

  /** Revokes `keys` here and on every other node; resolves once the others were told (or the tries ran out). */
  async revoke(keys: string[]): Promise<void> {
    this.end(keys);
    const { cluster, log, retryMs = PUBLISH_RETRY_MS } = this.options;
    if (!cluster) return;
    for (let tries = 1; ; tries++) {
      try {
        return await cluster.publish(REVOKED, { keys }, REVOKED);
      } catch (err) {
        if (tries === PUBLISH_TRIES) {
          // The others check every open credential again once their connection to the database is back.
          return log?.(`could not tell the other nodes that ${keys.join(', ')} was revoked (${(err as Error).message})`);
        }
        await pause(systemClock, retryMs * tries);
      }
    }
  }

  /** Hears the other nodes' revocations and every session's end. */
  listen(): void {
    const { cluster, events } = this.options;
    const stopCluster = cluster?.subscribe(({ name, data }) => {
      if (name === REVOKED) this.end((data as { keys: string[] }).keys);
      else if (name === RESYNC) void this.recheck();
    });
    const stopEvents = events?.subscribe((name, data) => {
      // A stopped or failed session's agent token no longer signs in (sessions/agent-tokens.ts).
      const session = data as { id: string; status: SessionStatus };
      if (name === 'session.updated' && CLOSED.includes(session.status)) this.end([revocationKey.session(session.id)]);
    });
    this.stopListening = () => {
      stopCluster?.();
      stopEvents?.();
    };
  }

  stop(): void {
    this.stopListening();
  }

  /** Checks every open credential again: revocations may have gone unheard. */
  async recheck(): Promise<void> {
    this.heardCount += 1;
    await Promise.all([...this.held].map((held) => this.check(held)));
  }

  private end(keys: readonly string[]): void {
    this.heardCount += 1;
    for (const held of this.held) {
      if (!held.credential.keys.some((key) => keys.includes(key))) continue;
      this.held.delete(held);
      held.end();
    }
  }

  private async check(held: Held): Promise<void> {
    // A store that does not answer now is not a revocation: the next one checks again.
    const valid = await held.credential.stillValid().catch(() => true);
    if (valid || !this.held.delete(held)) return;
    held.end();
  }
}
