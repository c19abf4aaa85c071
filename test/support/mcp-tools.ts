import type { Card } from '../../src/cards/model.js';
import type { Relay } from '../../src/relay/relay.js';

/** What /mcp and /mcp/openclaw list: the dialect's ask_user, then the relay tool. */
export const MCP_TOOLS = ['ask_user', 'list_questions', 'answer_question', 'start_session', 'watch_session'];

/**
 * The cards a provider asks through /mcp, in turn: each call polls `relay` (every 20 ms, at most
 * `tries` times) for a pending card of `provider` that no earlier call returned.
 */
export function cardsAskedBy(provider: Card['provider'], tries: number): (relay: Relay) => Promise<Card> {
  const seen = new Set<string>();
  return async (relay) => {
    for (let i = 0; i < tries; i++) {
      const card = (await relay.list({ status: 'pending' })).find((c) => c.provider === provider && !seen.has(c.id));
      if (card) {
        seen.add(card.id);
        return card;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('no card was asked');
  };
}
