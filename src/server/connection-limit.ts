import type { HttpBindings } from '@hono/node-server';
import type { MiddlewareHandler } from 'hono';
import type { ServerResponse } from 'node:http';
import { DEFAULT_MAX_CONNECTIONS } from '../config.js';
import { RelayError } from '../errors.js';
import type { Principal } from '../relay/access.js';
import type { AuthEnv } from './auth.js';
import type { Credential, Revocations } from './revocations.js';

// Long-lived connections (event streams, /wait long polls, MCP streams) each hold a socket
// for minutes or hours. Each principal (the human, each session's agent, the MCP client of
// the relay token) may hold at most ASKRELAY_MAX_CONNECTIONS of them at once; past that it
// gets 429 too_many_connections. Counting per principal means an agent at its cap takes
// nothing from the human or from another agent, and /api/health never counts. Every such
// connection passes here, so here it is also kept for its credential's revocation
// (revocations.ts): a person removed, a login ended, a session stopped ends it.

export class ConnectionLimit {
  private readonly held = new Map<string, number>();

  constructor(
    readonly max: number = DEFAULT_MAX_CONNECTIONS,
    private readonly revocations?: Pick<Revocations, 'hold'>,
  ) {}

  /** How many long-lived connections `who` holds now. */
  count(who: Principal): number {
    return this.held.get(keyOf(who)) ?? 0;
  }

  /** Takes one of `who`'s slots: the function that gives it back (once, however often it is called), or undefined at the cap. */
  acquire(who: Principal): (() => void) | undefined {
    const key = keyOf(who);
    const now = this.held.get(key) ?? 0;
    if (now >= this.max) return undefined;
    this.held.set(key, now + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(key) ?? 1) - 1;
      if (left > 0) this.held.set(key, left);
      else this.held.delete(key);
    };
  }

  /**
   * Holds a slot of `who` for as long as this HTTP response is open: given back when Node's
   * response closes (sent in full, or the client went away). Throws 429 at the cap. Revoking
   * `credential` ends the response: by `end`, or by cutting it off.
   */
  hold(res: ServerResponse | undefined, who: Principal, credential?: Credential, end?: () => void): void {
    const release = this.acquire(who);
    if (!release) throw this.refusal();
    if (!res || res.closed) return release();
    res.once('close', release);
    if (credential) this.revocations?.hold(res, credential, end ?? (() => res.destroy()));
  }

  refusal(): RelayError {
    return new RelayError(
      'too_many_connections',
      `You already hold ${this.max} long-lived connections (event streams, waits, MCP streams), the most one caller may (ASKRELAY_MAX_CONNECTIONS); close one first.`,
    );
  }

  /**
   * A route's middleware: the request holds a slot of its caller while its response is open;
   * `revoked` (in the context) aborts when its credential is revoked, for the route to end it.
   */
  middleware(): MiddlewareHandler<AuthEnv & { Bindings: HttpBindings }> {
    return async (c, next) => {
      const revoked = new AbortController();
      this.hold(c.env?.outgoing, c.get('principal'), c.get('credential'), () => revoked.abort());
      c.set('revoked', revoked.signal);
      await next();
    };
  }
}

// The human is one principal whatever the surface (page, CLI, TUI); each agent is its own.
const keyOf = (who: Principal) => `${who.kind}:${who.id}`;

