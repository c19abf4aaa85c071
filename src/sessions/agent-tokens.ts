import { createHmac, randomBytes } from 'node:crypto';
import type { AsyncSessionStore } from '../store/session-store.js';

// Each session's agent token is an HMAC of its id under the agent key (which the
// composition root derives from the relay token, outside the database): a session resumed
// after a restart gets the same token, yet the database only ever holds its hash, which is
// what a request's token is looked up by.

export class AgentTokens {
  /** Sessions whose token hash is stored already (by this process). */
  private readonly stored = new Set<string>();

  constructor(
    private readonly hashes: Pick<AsyncSessionStore, 'setAgentToken' | 'sessionOfToken'>,
    /** Without one, a random key: tokens then hold for this process's life only. */
    private readonly key: Buffer = randomBytes(32),
  ) {}

  /** The session's token (derived, so the same every time; remember() makes it count). */
  of(id: string): string {
    return `asa_${createHmac('sha256', this.key).update(id).digest('base64url')}`;
  }

  /** Stores the hash of the session's token once (replacing one made under another key). */
  async remember(id: string): Promise<void> {
    if (this.stored.has(id)) return;
    await this.hashes.setAgentToken(id, this.of(id));
    this.stored.add(id);
  }

  /** The live session a token belongs to (none for a stopped or failed session's). */
  session(token: string): Promise<string | undefined> {
    return this.hashes.sessionOfToken(token);
  }
}
