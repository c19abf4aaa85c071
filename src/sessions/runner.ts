import type { Card, CardDraft } from '../cards/model.js';
import type { Session, TranscriptEntry } from './model.js';
import type { RelayToolDefinition, RelayToolResult } from './relay-tool-contract.js';

// The seam between the session manager and a provider's runner. A runner owns the SDK
// and its I/O; everything else (cards, waiting, transcript, status) goes through here.

export interface RunnerContext {
  readonly session: Session;
  /** Aborted when the session is stopped; runners end their SDK work on it. */
  readonly signal: AbortSignal;
  /**
   * Opens a card for a tool call and resolves once it is closed (answered, skipped,
   * expired or cancelled), however long that takes. The draft's toolCallId makes a
   * re-sent call re-attach to the same card. When the session is stopped or the relay
   * shuts down (signal aborted) it resolves with the card as it stands, maybe still
   * pending: record nothing then, so a restart finds the call open.
   */
  ask(draft: CardDraft): Promise<Card>;
  /** How long the session's cards wait unless a draft says otherwise (the engine's wait); unknown in some tests. */
  readonly waitMs?: number;
  /** Appends to the stored transcript (shown on the page and by GET /api/sessions/:id). */
  log(role: TranscriptEntry['role'], text: string, cardId?: string): void;
  /** Marks activity, for the watchdog: a running turn without activity is flagged stuck. */
  heartbeat(): void;
  /** Durable provider state (e.g. the Messages API conversation), kept across restarts. */
  loadState<T>(): T | undefined;
  saveState(state: unknown): void;
  /**
   * The relay's environment: provider endpoint settings (each provider's page in docs/providers/)
   * and the operator's ASKRELAY_* settings for the runner itself (ASKRELAY_WORKDIR, …), with
   * ASKRELAY_TOKEN and ASKRELAY_URL set to the session's own agent token and the relay's
   * address. A runner that spawns a process hands it agentEnv(env) (src/sessions/agent-env.ts):
   * those two and no other ASKRELAY_* variable, so the agent's shell acts as the session.
   */
  readonly env: NodeJS.ProcessEnv;
  /**
   * The relay tool (list_questions, answer_question, start_session, watch_session) as this
   * session's agent; the runner offers the definitions to its model in the provider's form
   * and hands each call here (through runRelayTool in relay-tool.ts, which never throws, logs
   * the call and tells a stopped session). Approval cards it raises make the turn wait like ask().
   */
  readonly relayTools?: {
    readonly definitions: readonly RelayToolDefinition[];
    call(name: string, args: unknown, toolCallId?: string): Promise<RelayToolResult>;
  };
}

// A turn ends when start() or send() resolves (the session then waits for the user's next
// message); a rejection fails the session with its message.
export interface Runner {
  /** Runs the first turn from the prompt, or after a restart (resumed) picks up from saved state. */
  start(prompt: string, resumed: boolean): Promise<void>;
  /** The user's next message: continues an idle session. */
  send(text: string): Promise<void>;
  /** Stops the SDK work; pending cards are cancelled by the manager. */
  stop(): Promise<void>;
}

export interface RunnerFactory {
  /** Engines this provider offers, the first being the default. */
  readonly engines: readonly string[];
  /**
   * Engines whose whole state is in the store (loadState/saveState), so another node can
   * resume their sessions when the node running them stops. The others keep state on the
   * node's disk (Claude Code, the Copilot runtime): their sessions fail with the node.
   */
  readonly movable?: readonly string[];
  /** The default model when the session names none. */
  defaultModel(env: NodeJS.ProcessEnv): string;
  create(ctx: RunnerContext): Runner;
  /** How long (ms) the cards of an engine wait when the draft says nothing; else the relay's default (ASKRELAY_WAIT). */
  readonly waitsMs?: Readonly<Record<string, number>>;
  /** The ask_user variants an engine offers (askUserVariant), the first the default. */
  readonly askUserVariants?: Readonly<Record<string, readonly string[]>>;
  /** A start request the provider refuses although its engine exists: the sentence why. */
  checkStart?(request: { engine: string; askUserVariant?: string }): string | undefined;
  /** The provider has a plan mode to start in (the start option `plan`). */
  readonly planMode?: boolean;
}

/** What a provider's runner module makes: the registry (providers/index.ts) adds the engines. */
export type ProviderRunner = Omit<RunnerFactory, 'engines' | 'waitsMs' | 'askUserVariants' | 'checkStart'>;

/**
 * A runner whose engine module (and the SDK it imports) is loaded when the session first
 * runs, not when the relay starts: a relay at rest holds no provider SDK it never uses.
 */
export function lazyRunner(load: () => Promise<Runner>): Runner {
  let made: Promise<Runner> | undefined;
  const runner = () => (made ??= load());
  return {
    start: async (prompt, resumed) => (await runner()).start(prompt, resumed),
    send: async (text) => (await runner()).send(text),
    // Never started: nothing was loaded, nothing runs.
    stop: async () => {
      if (made) await (await made).stop();
    },
  };
}

/** A runner for a provider that is not configured: every turn fails with one clear sentence. */
export function missingKeyRunner(provider: { name: string; apiKeyVar: string; baseUrlVar: string }): Runner {
  const fail = async () => {
    throw new Error(`${provider.apiKeyVar} is not set: ${provider.name} sessions need it (and ${provider.baseUrlVar} for another endpoint).`);
  };
  return { start: fail, send: fail, stop: async () => {} };
}
