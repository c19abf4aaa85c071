import { createHmac, randomBytes } from 'node:crypto';
import type { SessionStore } from '../store/session-store.js';

// Each session's agent token is an HMAC of its id under the agent key (which the
// composition root derives from the relay token, outside the database): a session resumed
// after a restart gets the same token, yet the database only ever holds its hash, which is
// what a request's token is looked up by.

export class AgentTokens {
  /** Sessions whose token hash is stored already (by this process). */
  private readonly stored = new Set<string>();

  constructor(
    private readonly store: Pick<SessionStore, 'setAgentToken' | 'sessionOfToken'>,
    /** Without one, a random key: tokens then hold for this process's life only. */
    private readonly key: Buffer = randomBytes(32),
  ) {}

  /** The session's token; its hash is stored on first use (replacing one made under another key). */
  of(id: string): string {
    const token = `asa_${createHmac('sha256', this.key).update(id).digest('base64url')}`;
    if (!this.stored.has(id)) {
      this.store.setAgentToken(id, token);
      this.stored.add(id);
    }
    return token;
  }

  /** The live session a token belongs to (none for a stopped or failed session's). */
  session(token: string): string | undefined {
    return this.store.sessionOfToken(token);
  }
}
