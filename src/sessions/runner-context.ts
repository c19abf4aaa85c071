import type { Card, CardDraft } from '../cards/model.js';
import type { Principal } from '../relay/access.js';
import type { Relay } from '../relay/relay.js';
import type { AsyncSessionStore } from '../store/session-store.js';
import type { Session } from './model.js';
import type { RelayToolbox } from './relay-tool.js';
import type { RunnerContext } from './runner.js';
import type { Live, SessionBook } from './session-book.js';

// What a session's runner gets from the manager (RunnerContext, src/sessions/runner.ts): its
// cards, transcript, heartbeat, saved state, environment and the relay tool, each change
// queued in the session's book.

export interface RunnerContextDeps {
  relay: Relay;
  store: AsyncSessionStore;
  book: SessionBook;
  /** The relay's environment without the operator's token. */
  env: NodeJS.ProcessEnv;
  /** The relay's own address, known once it listens. */
  relayUrl?: () => string | undefined;
  toolbox?: RelayToolbox;
}

export interface RunnerSession {
  session: Session;
  live: Live;
  /** The session's agent token (ASKRELAY_TOKEN in its environment). */
  token: string;
  /** The provider's state as last saved (JSON, as the store keeps it). */
  savedState: string | undefined;
  /** How long the engine's cards wait unless the draft says (else the relay's default). */
  waitMs: number | undefined;
}

export function runnerContext(deps: RunnerContextDeps, { session, live, token, savedState, waitMs }: RunnerSession): RunnerContext {
  const { relay, store, book, env, relayUrl, toolbox } = deps;
  const id = session.id;
  const agent: Principal = { kind: 'agent', id, sessionId: id, surface: 'relay-tool' };
  // The runner reads back what it saved at once, while the store gets it in the session's queue.
  let state = savedState;
  const ctx: RunnerContext = {
    session,
    signal: live.controller.signal,
    ...(waitMs !== undefined ? { waitMs } : {}),
    // Read when the runner starts its SDK: by then the relay listens and knows its URL. The
    // session's own token and URL, never the operator's (src/sessions/agent-env.ts).
    get env() {
      return { ...env, ASKRELAY_TOKEN: token, ASKRELAY_URL: relayUrl?.() ?? '' };
    },
    ...(toolbox
      ? {
          relayTools: {
            definitions: toolbox.definitions,
            call: (name: string, args: unknown, toolCallId?: string) =>
              toolbox.call(agent, name, args, (draft) => ctx.ask({ ...draft, ...(toolCallId ? { toolCallId } : {}) })),
          },
        }
      : {}),
    ask: async (draft: CardDraft): Promise<Card> => {
      const card = await relay.create({
        relayMode: session.relayMode,
        askedBy: { kind: 'agent', id, surface: session.provider },
        ...draft,
        // The session's labels, under the draft's own.
        ...(session.labels || draft.labels ? { labels: { ...session.labels, ...draft.labels } } : {}),
        // The engine's own wait (Copilot's extension engine: ASKRELAY_WAIT_EXTENSION) unless the draft gives one.
        ...(draft.waitSeconds === undefined && waitMs !== undefined ? { waitSeconds: waitMs / 1000 } : {}),
        sessionId: id,
        provider: session.provider,
        engine: session.engine,
      });
      live.asking += 1;
      book.background(id, 'its status', () => book.setStatus(id, 'waiting'));
      try {
        const closed = await relay.settle(card.id, live.controller.signal);
        // The runner turns it into the tool result its model reads next: delivered to the session.
        if (closed.delivery) void relay.delivered(closed, 'session').catch(() => {});
        return closed;
      } finally {
        live.asking -= 1;
        book.touch(id);
      }
    },
    log: (role, text, cardId) => book.background(id, 'a transcript line', () => book.log(id, role, text, cardId)),
    heartbeat: () => book.touch(id),
    loadState: <T>() => (state ? (JSON.parse(state) as T) : undefined),
    saveState: (next) => {
      const text = JSON.stringify(next);
      state = text;
      book.background(id, 'its state', () => store.saveState(id, text === undefined ? undefined : JSON.parse(text)));
    },
  };
  return ctx;
}
