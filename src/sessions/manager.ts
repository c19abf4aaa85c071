import { randomBytes } from 'node:crypto';
import { RelayError } from '../errors.js';
import { systemClock, type Clock } from '../relay/clock.js';
import type { Principal } from '../relay/access.js';
import type { CardAccess } from '../relay/card-access.js';
import type { Relay } from '../relay/relay.js';
import type { AuditWriter } from '../store/audit-store.js';
import type { AsyncSessionStore } from '../store/session-store.js';
import { AgentTokens } from './agent-tokens.js';
import { startSessionSchema, type Session, type StartSession } from './model.js';
import { providerIdSchema } from './providers.js';
import { RelayToolbox } from './relay-tool.js';
import type { Runner, RunnerFactory } from './runner.js';
import { LateAnswers } from './late-answers.js';
import { runnerContext } from './runner-context.js';
import { CLOSED, SessionBook, stopRunner, type Launching, type Live } from './session-book.js';
import { newSession, resumption } from './session-checks.js';
import type { SessionOwners } from './session-owners.js';
import { firstTurn, markStuck, runTurn, type TurnDeps } from './turns.js';

// Runs agent sessions: starts a provider's runner, keeps status and transcript, hands
// tool calls to the relay as cards, stops sessions, resumes them after a restart, and
// flags turns that stall (never one that waits on a card). Every change of a session runs in
// its own queue (session-book.ts); get() waits for the queued changes first. A runner's view
// of all this is runner-context.ts; turns and the watchdog are turns.ts.

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
  /** The relay's own address, handed to agents as ASKRELAY_URL; known once it listens. */
  relayUrl?: () => string | undefined;
}

export class SessionManager {
  private readonly clock: Clock;
  private readonly env: NodeJS.ProcessEnv;
  private watchdog?: NodeJS.Timeout;
  private readonly tokens: AgentTokens;
  private readonly book: SessionBook;
  private readonly live: Map<string, Live>;
  private readonly turns: TurnDeps;
  private readonly warn: (line: string) => void;
  private readonly late: LateAnswers;
  private readonly stopLate: () => void;
  private closing = false;
  readonly toolbox?: RelayToolbox;
  /** A start request as POST /api/sessions takes it, the provider one of this relay's. */
  readonly startSchema: ReturnType<typeof startSessionSchema>;

  constructor(private readonly options: SessionManagerOptions) {
    this.clock = options.clock ?? systemClock;
    // Agents run tools and shells: the operator's token never reaches a provider; each
    // agent gets its own session's token instead (runner-context.ts).
    const { ASKRELAY_TOKEN: _token, ...env } = options.env ?? process.env;
    this.env = env;
    this.tokens = new AgentTokens(options.store, options.agentKey);
    this.warn = options.log ?? ((line) => console.warn(line));
    this.book = new SessionBook({ relay: options.relay, store: options.store, clock: this.clock, warn: this.warn });
    this.live = this.book.live;
    this.turns = { book: this.book, clock: this.clock, afterTurn: (id) => this.late.offer(id), ...(options.owners ? { owners: options.owners } : {}) };
    this.late = new LateAnswers(options.relay, this.book, () => this.turns);
    this.stopLate = this.late.listen();
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
    await this.book.serial(id, async () => {
      const session = await this.book.record(id);
      if (session.agentsMayAnswer === allowed) return;
      await this.book.update(id, { agentsMayAnswer: allowed });
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
    const fields = { id: `s_${randomBytes(8).toString('hex')}`, now: new Date(this.clock.now()).toISOString(), env: this.env };
    const { session, factory } = newSession(input, this.options.providers, fields);
    // The lease first: another node's lease round adopts every active session no node holds,
    // and would otherwise find this one stored but not yet held, and run it too. This node's
    // own round skips it while it is being launched (book.launching).
    await this.book.whileLaunching(session.id, async (mark) => {
      await this.options.owners?.claim(session.id);
      mark.held = true;
      await this.options.store.insert(session);
      await this.book.serial(session.id, () => this.book.log(session.id, 'user', input.prompt));
      const live = await this.launch(session, factory);
      if (!live) return;
      await this.book.serial(session.id, () => firstTurn(this.turns, session.id, live, () => live.runner.start(input.prompt, false)));
    });
    return this.get(session.id);
  }

  /** The session with its transcript, once the changes queued for it are stored. */
  async get(id: string): Promise<Session> {
    await this.book.settled(id);
    return this.book.withTranscript(id);
  }

  list(): Promise<Session[]> {
    return this.options.store.list();
  }

  async message(id: string, text: string): Promise<Session> {
    if (await this.forwarded(id, 'message', text)) return this.get(id);
    // Idle, then running: one step, so two messages never both find the session idle.
    await this.book.serial(id, async () => {
      const session = await this.book.record(id);
      if (CLOSED.includes(session.status)) throw new RelayError('session_closed', `The session is ${session.status}.`);
      const live = this.live.get(id);
      if (session.status !== 'idle' || !live) {
        throw new RelayError('session_busy', `The agent is ${session.status === 'waiting' ? 'waiting on a card' : 'working'}; send the message when the session is idle.`);
      }
      await this.book.log(id, 'user', text);
      await runTurn(this.turns, id, () => live.runner.send(text));
    });
    return this.get(id);
  }

  async stop(id: string): Promise<Session> {
    if (await this.forwarded(id, 'stop')) return this.get(id);
    const stopping = await this.book.serial(id, async () => {
      const session = await this.book.record(id);
      if (CLOSED.includes(session.status)) return undefined;
      const live = this.live.get(id);
      this.live.delete(id);
      await this.book.update(id, { status: 'stopped' });
      return { live };
    });
    if (!stopping) return this.get(id);
    const { live } = stopping;
    live?.controller.abort();
    await this.book.cancelPending(id);
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
      // Being launched here (started, or adopted by a call of adopt() that runs meanwhile): not twice.
      if (this.live.has(session.id) || this.book.launching.has(session.id) || this.closing) continue;
      const closed = await this.book.whileLaunching(session.id, async (mark) => {
        const claim = owners ? await owners.claim(session.id) : { held: true };
        if (!claim.held) return false;
        // Read again now that it is held: stopped since the list was read (its lease just given
        // up, and so taken here again), it is left stopped.
        const current = await this.options.store.get(session.id);
        if (!current || CLOSED.includes(current.status)) {
          await owners?.release(session.id);
          return false;
        }
        mark.held = true;
        try {
          await this.resume(current, claim.from, mark);
          return false;
        } catch (err) {
          // One session that cannot be picked up must not keep the relay (or the sessions after it) from starting.
          if (this.closing) return true;
          mark.held = false;
          await this.drop(session.id);
          await this.giveUp(session.id, `The session could not be resumed after the restart: ${(err as Error)?.message ?? String(err)}`);
          return false;
        }
      });
      if (closed) return;
    }
  }

  /**
   * A stored session this relay cannot run (its provider or engine is gone, its resume
   * failed): failed with the sentence saying why, and its pending cards cancelled, as for a
   * stopped session, since no runner will ever read their answers.
   */
  private async giveUp(id: string, error: string): Promise<void> {
    await this.book.serial(id, () => this.book.update(id, { status: 'failed', error }));
    await this.book.cancelPending(id);
    await this.options.owners?.release(id);
  }

  private async resume(session: Session, from: string | undefined, mark: Launching): Promise<void> {
    const next = resumption(session, this.options.providers[session.provider], from, this.options.owners?.node);
    // A session that fails here is no longer this node's: not counted as held once it is seen failed.
    if (next.kind !== 'resume') mark.held = false;
    if (next.kind === 'give-up') return this.giveUp(session.id, next.error);
    if (next.kind === 'fail') {
      await this.book.serial(session.id, () => this.book.update(session.id, { status: 'failed', error: next.error }));
      return this.options.owners?.release(session.id);
    }
    const live = await this.launch(session, next.factory);
    if (!live) return;
    if (session.status === 'idle') {
      // Stopped while it was being launched: stop() found no runner to stop then.
      if (CLOSED.includes((await this.book.record(session.id)).status)) return this.book.dropLaunched(session.id, live);
      // An idle session takes a late answer that came while no node ran it.
      return this.late.offer(session.id);
    }
    const prompt = (await this.options.store.transcript(session.id)).find((e) => e.role === 'user')?.text ?? '';
    await this.book.serial(session.id, () => firstTurn(this.turns, session.id, live, () => live.runner.start(prompt, true)));
  }

  /** Sessions whose runner is on this node, or is being made here (the lease round renews their leases). */
  liveIds(): string[] {
    return this.book.ownIds();
  }

  /** Another node runs the session now: its runner here stops, writing nothing more. */
  async drop(id: string): Promise<void> {
    const launching = this.book.launching.get(id);
    if (launching) launching.dropped = true;
    const live = this.live.get(id);
    if (!live) return;
    this.live.delete(id);
    await stopRunner(live);
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
    this.stopLate();
    if (this.watchdog) clearInterval(this.watchdog);
    const lives = [...this.live.values()];
    this.live.clear();
    lives.forEach((l) => l.controller.abort());
    await Promise.all(lives.map((l) => l.runner.stop().catch(() => {})));
    // What the runners queued before they stopped is stored before the store may close.
    await this.book.drained();
  }

  /** The session's runner, live on this node; none when another node took the session meanwhile. */
  private async launch(session: Session, factory: RunnerFactory): Promise<Live | undefined> {
    const id = session.id;
    // The token counts from here on; the provider's state is read once, then kept here too.
    await this.tokens.remember(id);
    const saved = await this.options.store.loadState<unknown>(id);
    // Closed meanwhile: no runner is made that close() would not stop.
    if (this.closing) throw new Error('The relay is shutting down.');
    if (this.book.launching.get(id)?.dropped) return undefined;
    const controller = new AbortController();
    const live: Live = { controller, lastActivity: this.clock.now(), asking: 0, runner: undefined as unknown as Runner };
    const { relay, store, relayUrl } = this.options;
    live.runner = factory.create(
      runnerContext(
        { relay, store, book: this.book, env: this.env, ...(relayUrl ? { relayUrl } : {}), ...(this.toolbox ? { toolbox: this.toolbox } : {}) },
        {
          session,
          live,
          token: this.agentToken(id),
          savedState: saved === undefined ? undefined : JSON.stringify(saved),
          waitMs: factory.waitsMs?.[session.engine],
        },
      ),
    );
    this.live.set(id, live);
    return live;
  }

  private startWatchdog(): void {
    const after = this.options.stuckAfterMs ?? 10 * 60_000;
    this.watchdog = setInterval(() => void this.checkStuck(after), Math.max(Math.min(after / 4, 30_000), 10));
    this.watchdog.unref();
  }

  /** Exposed for tests with a fake clock; resolves once the stuck sessions are marked. */
  checkStuck(after = this.options.stuckAfterMs ?? 10 * 60_000): Promise<void> {
    return markStuck(this.turns, after, this.warn);
  }
}
