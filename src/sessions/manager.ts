import { randomBytes } from 'node:crypto';
import type { Card, CardDraft } from '../cards/model.js';
import { RelayError } from '../errors.js';
import { systemClock, type Clock } from '../relay/clock.js';
import type { Principal } from '../relay/access.js';
import type { CardAccess } from '../relay/card-access.js';
import type { Relay } from '../relay/relay.js';
import type { AuditWriter } from '../store/audit-store.js';
import type { AsyncSessionStore, SessionPatch } from '../store/session-store.js';
import { AgentTokens } from './agent-tokens.js';
import { startSessionSchema, type Session, type SessionStatus, type StartSession, type TranscriptEntry } from './model.js';
import { providerIdSchema } from './providers.js';
import { RelayToolbox } from './relay-tool.js';
import type { Runner, RunnerContext, RunnerFactory } from './runner.js';
import type { SessionOwners } from './session-owners.js';

// Runs agent sessions: starts a provider's runner, keeps status and transcript, hands
// tool calls to the relay as cards, stops sessions, resumes them after a restart, and
// flags turns that stall (never one that waits on a card).
//
// The store is asynchronous (PostgreSQL serves it so): every change of a session's record,
// transcript and provider state runs in that session's own queue (serial()), so changes keep
// the order they were made in, and a read-then-write (is it idle? then it runs) is one step
// no other change of the session gets between. get() waits for the queued changes first.

export interface SessionManagerOptions {
  relay: Relay;
  store: AsyncSessionStore;
  /** The runner factories by provider id, in the order they are listed (src/sessions/providers.ts: runnerFactories). */
  providers: Readonly<Record<string, RunnerFactory>>;
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
  /** Where a change made in the background (a runner's log line, heartbeat, saved state) that failed is told. */
  log?: (line: string) => void;
  /** Several nodes on one database: which node runs which session (see session-owners.ts). */
  owners?: SessionOwners;
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
  /** Each session's queue of changes: its last one (see serial()). */
  private readonly queues = new Map<string, Promise<unknown>>();
  private readonly warn: (line: string) => void;
  private closing = false;
  readonly toolbox?: RelayToolbox;
  /** A start request as POST /api/sessions takes it, the provider one of this relay's. */
  readonly startSchema: ReturnType<typeof startSessionSchema>;
  /** The relay's own address once it listens, handed to agents as ASKRELAY_URL. */
  relayUrl?: string;

  constructor(private readonly options: SessionManagerOptions) {
    this.clock = options.clock ?? systemClock;
    // Agents run tools and shells: the operator's token never reaches a provider; each
    // agent gets its own session's token instead (see context()).
    const { ASKRELAY_TOKEN: _token, ...env } = options.env ?? process.env;
    this.env = env;
    this.tokens = new AgentTokens(options.store, options.agentKey);
    this.warn = options.log ?? ((line) => console.warn(line));
    const providerIds = Object.keys(options.providers);
    this.startSchema = startSessionSchema(providerIdSchema(providerIds));
    if (options.access) this.toolbox = new RelayToolbox(options.access, this, providerIds);
  }

  /** The running session an agent token belongs to (stopped and failed sessions' tokens are void). */
  sessionOfToken(token: string): Promise<string | undefined> {
    return this.tokens.session(token);
  }

  /**
   * The session's agent token (the same after a restart; the database keeps only its hash,
   * stored when the session is launched: a token counts only for a session that runs).
   */
  agentToken(id: string): string {
    return this.tokens.of(id);
  }

  /** The human lets other agents answer this session's cards, or stops letting them. */
  async setAgentsMayAnswer(id: string, allowed: boolean, by: Principal): Promise<Session> {
    await this.serial(id, async () => {
      const session = await this.record(id);
      if (session.agentsMayAnswer === allowed) return;
      await this.update(id, { agentsMayAnswer: allowed });
      this.options.audit?.enqueue({
        at: new Date(this.clock.now()).toISOString(),
        event: 'session.permission',
        sessionId: id,
        actor: { kind: by.kind, id: by.id },
        surface: by.surface,
        detail: { agentsMayAnswer: allowed },
      });
    });
    return this.get(id);
  }

  grantWatch(watcher: string, target: string): Promise<void> {
    return this.options.store.grantWatch(watcher, target, this.clock.now());
  }

  watches(watcher: string, target: string): Promise<boolean> {
    return this.options.store.watches(watcher, target);
  }

  async start(input: StartSession): Promise<Session> {
    const factory = this.options.providers[input.provider];
    if (!factory) throw new RelayError('invalid_request', `The provider "${input.provider}" is not available in this relay.`);
    const engine = input.engine ?? factory.engines[0];
    if (!factory.engines.includes(engine)) {
      throw new RelayError('invalid_engine', `"${engine}" is not an engine of ${input.provider}; use ${factory.engines.join(' or ')}.`);
    }
    const variants = factory.askUserVariants?.[engine];
    const refusal =
      factory.checkStart?.({ engine, ...(input.askUserVariant ? { askUserVariant: input.askUserVariant } : {}) }) ??
      // An engine without variants has the one ask_user, the classic kind.
      (input.askUserVariant && !(variants ?? ['classic']).includes(input.askUserVariant)
        ? `askUserVariant "${input.askUserVariant}" is not offered by ${input.provider}'s ${engine} engine.`
        : undefined);
    if (refusal) throw new RelayError('invalid_engine', refusal);
    const now = new Date(this.clock.now()).toISOString();
    const session: Session = {
      id: `s_${randomBytes(8).toString('hex')}`,
      provider: input.provider,
      engine,
      model: input.model ?? factory.defaultModel(this.env),
      status: 'starting',
      relayMode: input.relayMode ?? 'autopilot',
      agentsMayAnswer: input.agentsMayAnswer ?? false,
      ...(variants?.length ? { askUserVariant: (input.askUserVariant ?? variants[0]) as Session['askUserVariant'] } : {}),
      createdAt: now,
      updatedAt: now,
    };
    // The lease first: another node's lease round adopts every active session no node holds,
    // and would otherwise find this one stored but not yet held, and run it too.
    await this.options.owners?.claim(session.id);
    await this.options.store.insert(session);
    await this.serial(session.id, () => this.log(session.id, 'user', input.prompt));
    const live = await this.launch(session, factory);
    await this.serial(session.id, () => this.firstTurn(session.id, live, () => live.runner.start(input.prompt, false)));
    return this.get(session.id);
  }

  /** The session with its transcript, once the changes queued for it are stored. */
  async get(id: string): Promise<Session> {
    await this.queues.get(id)?.catch(() => {});
    return this.withTranscript(id);
  }

  list(): Promise<Session[]> {
    return this.options.store.list();
  }

  async message(id: string, text: string): Promise<Session> {
    if (await this.forwarded(id, 'message', text)) return this.get(id);
    // Idle, then running: one step, so two messages never both find the session idle.
    await this.serial(id, async () => {
      const session = await this.record(id);
      if (CLOSED.includes(session.status)) throw new RelayError('session_closed', `The session is ${session.status}.`);
      const live = this.live.get(id);
      if (session.status !== 'idle' || !live) {
        throw new RelayError('session_busy', `The agent is ${session.status === 'waiting' ? 'waiting on a card' : 'working'}; send the message when the session is idle.`);
      }
      await this.log(id, 'user', text);
      await this.runTurn(id, () => live.runner.send(text));
    });
    return this.get(id);
  }

  async stop(id: string): Promise<Session> {
    if (await this.forwarded(id, 'stop')) return this.get(id);
    const stopping = await this.serial(id, async () => {
      const session = await this.record(id);
      if (CLOSED.includes(session.status)) return undefined;
      const live = this.live.get(id);
      this.live.delete(id);
      await this.update(id, { status: 'stopped' });
      return { live };
    });
    if (!stopping) return this.get(id);
    const { live } = stopping;
    live?.controller.abort();
    for (const card of await this.options.relay.list({ sessionId: id, status: 'pending' })) await this.options.relay.cancel(card.id);
    await live?.runner.stop().catch(() => {});
    await this.options.owners?.release(id).catch(() => {});
    return this.get(id);
  }

  /** After a restart: picks every unfinished session up where its provider can. */
  async recover(): Promise<void> {
    await this.adopt();
    this.startWatchdog();
  }

  /**
   * Picks up the unfinished sessions no node runs: after a restart, and (several nodes) those
   * of a node that stopped, once its lease ran out. A session whose engine keeps its state on
   * the stopped node's disk fails, saying so.
   */
  async adopt(): Promise<void> {
    const { owners } = this.options;
    for (const session of await this.options.store.active()) {
      if (this.live.has(session.id) || this.closing) continue;
      const claim = owners ? await owners.claim(session.id) : { held: true };
      if (!claim.held) continue;
      try {
        await this.resume(session, claim.from);
      } catch (err) {
        // One session that cannot be picked up must not keep the relay (or the sessions after it) from starting.
        if (this.closing) return;
        await this.drop(session.id);
        await this.giveUp(session.id, `The session could not be resumed after the restart: ${(err as Error)?.message ?? String(err)}`);
      }
    }
  }

  /**
   * A stored session this relay cannot run (its provider or engine is gone, its resume
   * failed): failed with the sentence saying why, and its pending cards cancelled, as for a
   * stopped session, since no runner will ever read their answers.
   */
  private async giveUp(id: string, error: string): Promise<void> {
    await this.serial(id, () => this.update(id, { status: 'failed', error }));
    for (const card of await this.options.relay.list({ sessionId: id, status: 'pending' })) await this.options.relay.cancel(card.id);
    await this.options.owners?.release(id);
  }

  private async resume(session: Session, from: string | undefined): Promise<void> {
    const factory = this.options.providers[session.provider];
    const fail = (error: string) => this.serial(session.id, () => this.update(session.id, { status: 'failed', error }));
    if (!factory) {
      return this.giveUp(session.id, `The provider "${session.provider}" is not available in this relay any more, so the session cannot resume; its pending cards were cancelled.`);
    }
    if (!factory.engines.includes(session.engine)) {
      return this.giveUp(
        session.id,
        `The engine "${session.engine}" of ${session.provider} is not available in this relay any more (it has ${factory.engines.join(', ')}), so the session cannot resume; its pending cards were cancelled.`,
      );
    }
    if (from && !factory.movable?.includes(session.engine)) {
      await fail(
        `The session ran on node ${from}, which stopped; its ${session.engine} engine keeps its state on that node's disk, so node ${this.options.owners?.node} cannot resume it. Start it again.`,
      );
      return this.options.owners?.release(session.id);
    }
    const live = await this.launch(session, factory);
    if (session.status === 'idle') return;
    const prompt = (await this.options.store.transcript(session.id)).find((e) => e.role === 'user')?.text ?? '';
    await this.serial(session.id, () => this.firstTurn(session.id, live, () => live.runner.start(prompt, true)));
  }

  /** Sessions whose runner is on this node. */
  liveIds(): string[] {
    return [...this.live.keys()];
  }

  /** Another node runs the session now: its runner here stops, writing nothing more. */
  async drop(id: string): Promise<void> {
    const live = this.live.get(id);
    if (!live) return;
    this.live.delete(id);
    live.controller.abort();
    await live.runner.stop().catch(() => {});
  }

  /** Hands a message or stop to the node running the session, when that is another one: true if it was. */
  private async forwarded(id: string, op: 'message' | 'stop', text?: string): Promise<boolean> {
    const { owners } = this.options;
    if (!owners || this.live.has(id)) return false;
    const node = await owners.holder(id);
    // No node holds it (its node stopped and the lease ran out): this node takes it now.
    if (!node) await this.adopt();
    if (!node || node === owners.node) return false;
    await owners.forward(node, op, { id, ...(text !== undefined ? { text } : {}) });
    return true;
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.watchdog) clearInterval(this.watchdog);
    const lives = [...this.live.values()];
    this.live.clear();
    lives.forEach((l) => l.controller.abort());
    await Promise.all(lives.map((l) => l.runner.stop().catch(() => {})));
    // What the runners queued before they stopped is stored before the store may close.
    await Promise.all([...this.queues.values()].map((q) => q.catch(() => {})));
  }

  /**
   * Runs `change` after every change queued for the session before it: a session's changes
   * are stored in the order they were made, and each sees the ones before it. A change never
   * waits on another change of its own session (that would wait for ever).
   */
  private serial<T>(id: string, change: () => Promise<T>): Promise<T> {
    const previous = this.queues.get(id) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(change);
    this.queues.set(id, next);
    const forget = () => {
      if (this.queues.get(id) === next) this.queues.delete(id);
    };
    next.then(forget, forget);
    return next;
  }

  /** A change a runner asked for without waiting (a log line, a heartbeat, its state): queued, failures told. */
  private background(id: string, what: string, change: () => Promise<unknown>): void {
    this.serial(id, change).catch((err: unknown) => this.warn(`askrelay: session ${id}: could not store ${what}: ${(err as Error)?.message ?? String(err)}`));
  }

  private async record(id: string): Promise<Session> {
    const session = await this.options.store.get(id);
    if (!session) throw new RelayError('not_found', `No session "${id}".`);
    return session;
  }

  private async withTranscript(id: string): Promise<Session> {
    const session = await this.record(id);
    return { ...session, transcript: await this.options.store.transcript(id) };
  }

  private async launch(session: Session, factory: RunnerFactory): Promise<Live> {
    const id = session.id;
    // The token counts from here on; the provider's state is read once, then kept here too.
    await this.tokens.remember(id);
    const saved = await this.options.store.loadState<unknown>(id);
    // Closed meanwhile: no runner is made that close() would not stop.
    if (this.closing) throw new Error('The relay is shutting down.');
    const controller = new AbortController();
    const live: Live = { controller, lastActivity: this.clock.now(), asking: 0, runner: undefined as unknown as Runner };
    live.runner = factory.create(this.context(session, live, saved === undefined ? undefined : JSON.stringify(saved), factory.waitsMs?.[session.engine]));
    this.live.set(id, live);
    return live;
  }

  /** `waitMs`: how long the engine's cards wait unless the draft says (else the relay's default). */
  private context(session: Session, live: Live, savedState: string | undefined, waitMs: number | undefined): RunnerContext {
    const { relay, store } = this.options;
    const id = session.id;
    const token = this.agentToken(id);
    const agent: Principal = { kind: 'agent', id, sessionId: id, surface: 'relay-tool' };
    const toolbox = this.toolbox;
    const manager = this;
    // The provider's state as last saved (JSON, as the store keeps it): the runner reads back
    // what it saved at once, while the store gets it in the session's queue.
    let state = savedState;
    const ctx: RunnerContext = {
      session,
      signal: live.controller.signal,
      // Read when the runner starts its SDK: by then the relay listens and knows its URL. The
      // session's own token and URL, never the operator's (src/sessions/agent-env.ts).
      get env() {
        return { ...manager.env, ASKRELAY_TOKEN: token, ASKRELAY_URL: manager.relayUrl };
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
          // The engine's own wait (Copilot's extension engine: ASKRELAY_WAIT_EXTENSION) unless the draft gives one.
          ...(draft.waitSeconds === undefined && waitMs !== undefined ? { waitSeconds: waitMs / 1000 } : {}),
          sessionId: id,
          provider: session.provider,
          engine: session.engine,
        });
        live.asking += 1;
        this.background(id, 'its status', () => this.setStatus(id, 'waiting'));
        try {
          return await relay.settle(card.id, live.controller.signal);
        } finally {
          live.asking -= 1;
          this.touch(id);
        }
      },
      log: (role, text, cardId) => this.background(id, 'a transcript line', () => this.log(id, role, text, cardId)),
      heartbeat: () => this.touch(id),
      loadState: <T>() => (state ? (JSON.parse(state) as T) : undefined),
      saveState: (next) => {
        const text = JSON.stringify(next);
        state = text;
        this.background(id, 'its state', () => store.saveState(id, text === undefined ? undefined : JSON.parse(text)));
      },
    };
    return ctx;
  }

  /**
   * A launched session's first turn (in the session's queue): not when the session was
   * stopped while it was being launched (stop() found no runner to stop then).
   */
  private async firstTurn(id: string, live: Live, turn: () => Promise<void>): Promise<void> {
    if (!CLOSED.includes((await this.record(id)).status)) return this.runTurn(id, turn);
    if (this.live.get(id) === live) this.live.delete(id);
    live.controller.abort();
    await live.runner.stop().catch(() => {});
  }

  /** Marks the session running and starts the turn (in the session's queue: serial()). */
  private async runTurn(id: string, turn: () => Promise<void>): Promise<void> {
    const live = this.live.get(id);
    if (live) live.lastActivity = this.clock.now();
    await this.setStatus(id, 'running');
    turn().then(
      () => this.background(id, 'its status', async () => {
        if (await this.isLive(id)) await this.setStatus(id, 'idle');
      }),
      (err: unknown) =>
        this.background(id, 'its status', async () => {
          if (!(await this.isLive(id))) return;
          const failed = this.live.get(id);
          this.live.delete(id);
          await this.update(id, { status: 'failed', error: (err as Error).message ?? String(err) });
          // A card still open (Claude Code died while it waited on one) would take an answer
          // nobody reads: it is cancelled, as when the session is stopped.
          failed?.controller.abort();
          for (const card of await this.options.relay.list({ sessionId: id, status: 'pending' })) await this.options.relay.cancel(card.id);
          await this.options.owners?.release(id);
          // The provider's own process (the Copilot runtime) ends with the session: nothing
          // else would stop it, since close() stops only the live runners.
          await failed?.runner.stop().catch(() => {});
        }),
    );
  }

  private async isLive(id: string): Promise<boolean> {
    return this.live.has(id) && !CLOSED.includes((await this.options.store.get(id))?.status ?? 'stopped');
  }

  /** Activity: the watchdog's clock restarts, and a stuck turn is running again. */
  private touch(id: string): void {
    const live = this.live.get(id);
    if (live) live.lastActivity = this.clock.now();
    const asking = live?.asking;
    this.background(id, 'its status', async () => {
      const status = (await this.options.store.get(id))?.status;
      // An SDK that keeps reporting while the turn waits on a card (Copilot's runtime does)
      // leaves it waiting: a waiting turn is never running, so never stuck.
      if (status === 'stuck' || (status === 'waiting' && !asking)) await this.setStatus(id, 'running');
    });
  }

  private async setStatus(id: string, status: SessionStatus): Promise<void> {
    if ((await this.options.store.get(id))?.status !== status) await this.update(id, { status });
  }

  private async update(id: string, patch: SessionPatch): Promise<void> {
    const next = await this.options.store.update(id, { ...patch, updatedAt: new Date(this.clock.now()).toISOString() });
    if (next) this.options.relay.events.emit('session.updated', next);
  }

  private async log(id: string, role: TranscriptEntry['role'], text: string, cardId?: string): Promise<void> {
    const entry: TranscriptEntry = { at: new Date(this.clock.now()).toISOString(), role, text, ...(cardId ? { cardId } : {}) };
    await this.options.store.append(id, entry);
    const live = this.live.get(id);
    if (live) live.lastActivity = this.clock.now();
    await this.update(id, {});
  }

  private startWatchdog(): void {
    const after = this.options.stuckAfterMs ?? 10 * 60_000;
    this.watchdog = setInterval(() => void this.checkStuck(after), Math.max(Math.min(after / 4, 30_000), 10));
    this.watchdog.unref();
  }

  /** Exposed for tests with a fake clock; resolves once the stuck sessions are marked. */
  async checkStuck(after = this.options.stuckAfterMs ?? 10 * 60_000): Promise<void> {
    const now = this.clock.now();
    const checks = [...this.live].map(([id, live]) =>
      this.serial(id, async () => {
        if ((await this.options.store.get(id))?.status === 'running' && now - live.lastActivity >= after) await this.setStatus(id, 'stuck');
      }).catch((err: unknown) => this.warn(`askrelay: session ${id}: could not check it for a stall: ${(err as Error)?.message ?? String(err)}`)),
    );
    await Promise.all(checks);
  }
}
