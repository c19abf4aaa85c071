import { randomBytes } from 'node:crypto';
import type { Card, CardDraft } from '../cards/model.js';
import { RelayError } from '../errors.js';
import { systemClock, type Clock } from '../relay/clock.js';
import type { Principal } from '../relay/access.js';
import type { CardAccess } from '../relay/card-access.js';
import type { Relay } from '../relay/relay.js';
import type { AuditWriter } from '../store/audit-store.js';
import type { SessionPatch, SessionStore } from '../store/session-store.js';
import { AgentTokens } from './agent-tokens.js';
import type { ProviderId, Session, SessionStatus, StartSession, TranscriptEntry } from './model.js';
import { RELAY_TOOL_DEFINITIONS, RelayToolbox } from './relay-tool.js';
import type { Runner, RunnerContext, RunnerFactory } from './runner.js';

// Runs agent sessions: starts a provider's runner, keeps status and transcript, hands
// tool calls to the relay as cards, stops sessions, resumes them after a restart, and
// flags turns that stall (never one that waits on a card).

export interface SessionManagerOptions {
  relay: Relay;
  store: SessionStore;
  providers: Partial<Record<ProviderId, RunnerFactory>>;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  /** A running turn with no activity for this long is shown as stuck. */
  stuckAfterMs?: number;
  /** The cards as each principal sees them; with it, every session gets the relay tool. */
  access?: CardAccess;
  /** Where changes of a session's permissions are recorded. */
  audit?: AuditWriter;
  /** The key agent tokens are derived from, kept outside the database (see agent-tokens.ts). */
  agentKey?: Buffer;
}

interface Live {
  runner: Runner;
  controller: AbortController;
  lastActivity: number;
  /** Cards the turn waits on right now (ask() calls under way). */
  asking: number;
}

const CLOSED: SessionStatus[] = ['stopped', 'failed'];

export class SessionManager {
  private readonly live = new Map<string, Live>();
  private readonly clock: Clock;
  private readonly env: NodeJS.ProcessEnv;
  private watchdog?: NodeJS.Timeout;
  private readonly tokens: AgentTokens;
  readonly toolbox?: RelayToolbox;
  /** The relay's own address once it listens, handed to agents as ASKRELAY_URL. */
  relayUrl?: string;

  constructor(private readonly options: SessionManagerOptions) {
    this.clock = options.clock ?? systemClock;
    // Agents run tools and shells: the operator's token never reaches a provider; each
    // agent gets its own session's token instead (see context()).
    const { ASKRELAY_TOKEN: _token, ...env } = options.env ?? process.env;
    this.env = env;
    this.tokens = new AgentTokens(options.store, options.agentKey);
    if (options.access) this.toolbox = new RelayToolbox(options.access, this);
  }

  /** The running session an agent token belongs to (stopped and failed sessions' tokens are void). */
  sessionOfToken(token: string): string | undefined {
    return this.tokens.session(token);
  }

  /** The session's agent token (the same after a restart; the database keeps only its hash). */
  agentToken(id: string): string {
    return this.tokens.of(id);
  }

  /** The human lets other agents answer this session's cards, or stops letting them. */
  setAgentsMayAnswer(id: string, allowed: boolean, by: Principal): Session {
    const session = this.get(id);
    if (session.agentsMayAnswer !== allowed) {
      this.update(id, { agentsMayAnswer: allowed });
      this.options.audit?.enqueue({
        at: new Date(this.clock.now()).toISOString(),
        event: 'session.permission',
        sessionId: id,
        actor: { kind: by.kind, id: by.id },
        surface: by.surface,
        detail: { agentsMayAnswer: allowed },
      });
    }
    return this.get(id);
  }

  grantWatch(watcher: string, target: string): void {
    this.options.store.grantWatch(watcher, target, this.clock.now());
  }

  watches(watcher: string, target: string): boolean {
    return this.options.store.watches(watcher, target);
  }

  start(input: StartSession): Session {
    const factory = this.options.providers[input.provider];
    if (!factory) throw new RelayError('invalid_request', `The provider "${input.provider}" is not available in this relay.`);
    const engine = input.engine ?? factory.engines[0];
    if (!factory.engines.includes(engine)) {
      throw new RelayError('invalid_engine', `"${engine}" is not an engine of ${input.provider}; use ${factory.engines.join(' or ')}.`);
    }
    if (input.askUserVariant === 'form' && engine !== 'extension') {
      throw new RelayError('invalid_engine', 'askUserVariant "form" is Copilot\'s extension engine only; start the session with engine "extension".');
    }
    const now = new Date(this.clock.now()).toISOString();
    const session: Session = {
      id: `s_${randomBytes(8).toString('hex')}`,
      provider: input.provider,
      engine,
      model: input.model ?? factory.defaultModel(this.env),
      status: 'starting',
      relayMode: input.relayMode ?? 'autopilot',
      agentsMayAnswer: input.agentsMayAnswer ?? false,
      ...(engine === 'extension' ? { askUserVariant: input.askUserVariant ?? 'classic' } : {}),
      createdAt: now,
      updatedAt: now,
    };
    this.options.store.insert(session);
    this.log(session.id, 'user', input.prompt);
    const live = this.launch(session, factory);
    this.runTurn(session.id, () => live.runner.start(input.prompt, false));
    return this.get(session.id);
  }

  get(id: string): Session {
    const session = this.options.store.get(id);
    if (!session) throw new RelayError('not_found', `No session "${id}".`);
    return { ...session, transcript: this.options.store.transcript(id) };
  }

  list(): Session[] {
    return this.options.store.list();
  }

  message(id: string, text: string): Session {
    const session = this.get(id);
    if (CLOSED.includes(session.status)) throw new RelayError('session_closed', `The session is ${session.status}.`);
    const live = this.live.get(id);
    if (session.status !== 'idle' || !live) {
      throw new RelayError('session_busy', `The agent is ${session.status === 'waiting' ? 'waiting on a card' : 'working'}; send the message when the session is idle.`);
    }
    this.log(id, 'user', text);
    this.runTurn(id, () => live.runner.send(text));
    return this.get(id);
  }

  async stop(id: string): Promise<Session> {
    const session = this.get(id);
    if (CLOSED.includes(session.status)) return session;
    const live = this.live.get(id);
    this.live.delete(id);
    this.update(id, { status: 'stopped' });
    live?.controller.abort();
    for (const card of await this.options.relay.list({ sessionId: id, status: 'pending' })) await this.options.relay.cancel(card.id);
    await live?.runner.stop().catch(() => {});
    return this.get(id);
  }

  /** After a restart: picks every unfinished session up where its provider can. */
  recover(): void {
    for (const session of this.options.store.active()) {
      const factory = this.options.providers[session.provider];
      if (!factory) {
        this.update(session.id, { status: 'failed', error: `The provider "${session.provider}" is not available any more.` });
        continue;
      }
      const live = this.launch(session, factory);
      if (session.status === 'idle') continue;
      const prompt = this.options.store.transcript(session.id).find((e) => e.role === 'user')?.text ?? '';
      this.runTurn(session.id, () => live.runner.start(prompt, true));
    }
    this.startWatchdog();
  }

  async close(): Promise<void> {
    if (this.watchdog) clearInterval(this.watchdog);
    const lives = [...this.live.values()];
    this.live.clear();
    lives.forEach((l) => l.controller.abort());
    await Promise.all(lives.map((l) => l.runner.stop().catch(() => {})));
  }

  private launch(session: Session, factory: RunnerFactory): Live {
    const controller = new AbortController();
    const live: Live = { controller, lastActivity: this.clock.now(), asking: 0, runner: undefined as unknown as Runner };
    live.runner = factory.create(this.context(session, live));
    this.live.set(session.id, live);
    return live;
  }

  private context(session: Session, live: Live): RunnerContext {
    const { relay, store } = this.options;
    const id = session.id;
    const token = this.agentToken(id);
    const agent: Principal = { kind: 'agent', id, sessionId: id, surface: 'relay-tool' };
    const toolbox = this.toolbox;
    const manager = this;
    const ctx: RunnerContext = {
      session,
      signal: live.controller.signal,
      // Read when the runner starts its SDK: by then the relay listens and knows its URL.
      get env() {
        return { ...manager.env, ASKRELAY_TOKEN: token, ...(manager.relayUrl ? { ASKRELAY_URL: manager.relayUrl } : {}) };
      },
      ...(toolbox
        ? {
            relayTools: {
              definitions: RELAY_TOOL_DEFINITIONS,
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
          sessionId: id,
          provider: session.provider,
          engine: session.engine,
        });
        live.asking += 1;
        this.setStatus(id, 'waiting');
        try {
          return await relay.settle(card.id, live.controller.signal);
        } finally {
          live.asking -= 1;
          this.touch(id);
        }
      },
      log: (role, text, cardId) => this.log(id, role, text, cardId),
      heartbeat: () => this.touch(id),
      loadState: <T>() => store.loadState<T>(id),
      saveState: (state) => store.saveState(id, state),
    };
    return ctx;
  }

  private runTurn(id: string, turn: () => Promise<void>): void {
    const live = this.live.get(id);
    if (live) live.lastActivity = this.clock.now();
    this.setStatus(id, 'running');
    turn().then(
      () => this.isLive(id) && this.setStatus(id, 'idle'),
      (err: unknown) => {
        if (!this.isLive(id)) return;
        this.live.delete(id);
        this.update(id, { status: 'failed', error: (err as Error).message ?? String(err) });
      },
    );
  }

  private isLive(id: string): boolean {
    return this.live.has(id) && !CLOSED.includes(this.options.store.get(id)?.status ?? 'stopped');
  }

  /** Activity: the watchdog's clock restarts, and a stuck turn is running again. */
  private touch(id: string): void {
    const live = this.live.get(id);
    if (live) live.lastActivity = this.clock.now();
    const status = this.options.store.get(id)?.status;
    // An SDK that keeps reporting while the turn waits on a card (Copilot's runtime does)
    // leaves it waiting: a waiting turn is never running, so never stuck.
    if (status === 'stuck' || (status === 'waiting' && !live?.asking)) this.setStatus(id, 'running');
  }

  private setStatus(id: string, status: SessionStatus): void {
    if (this.options.store.get(id)?.status !== status) this.update(id, { status });
  }

  private update(id: string, patch: SessionPatch): void {
    const next = this.options.store.update(id, { ...patch, updatedAt: new Date(this.clock.now()).toISOString() });
    if (next) this.options.relay.events.emit('session.updated', next);
  }

  private log(id: string, role: TranscriptEntry['role'], text: string, cardId?: string): void {
    const entry: TranscriptEntry = { at: new Date(this.clock.now()).toISOString(), role, text, ...(cardId ? { cardId } : {}) };
    this.options.store.append(id, entry);
    const live = this.live.get(id);
    if (live) live.lastActivity = this.clock.now();
    this.update(id, {});
  }

  private startWatchdog(): void {
    const after = this.options.stuckAfterMs ?? 10 * 60_000;
    this.watchdog = setInterval(() => this.checkStuck(after), Math.max(Math.min(after / 4, 30_000), 10));
    this.watchdog.unref();
  }

  /** Exposed for tests with a fake clock. */
  checkStuck(after = this.options.stuckAfterMs ?? 10 * 60_000): void {
    const now = this.clock.now();
    for (const [id, live] of this.live) {
      if (this.options.store.get(id)?.status === 'running' && now - live.lastActivity >= after) this.setStatus(id, 'stuck');
    }
  }
}
