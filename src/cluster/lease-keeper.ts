import type { Cluster } from './cluster.js';
import { sessionLease } from './cluster.js';

// Keeps this node's leases: every third of a lease it says it is alive, renews what it holds
// and takes what another node stopped renewing. Work with one owner (the chat channels, the
// push queue) starts where its lease is gained and stops where it is lost; a session's
// runner is dropped here when another node took its lease (this node was cut off longer than
// a lease), and sessions whose node stopped are adopted (SessionManager.adopt).

export interface OwnedWork {
  name: string;
  gained(): Promise<void> | void;
  lost(): Promise<void> | void;
}

export interface SessionWork {
  /** Sessions whose runner is on this node. */
  liveIds(): string[];
  /** Lets go of a session's runner without writing anything (another node holds it now). */
  drop(id: string): Promise<void>;
  /** Takes over the unfinished sessions no live node holds. */
  adopt(): Promise<void>;
}

export interface LeaseKeeperOptions {
  works: OwnedWork[];
  sessions?: SessionWork;
  /** What this node holds, for the node list. */
  holds(): Record<string, number>;
  url(): string | undefined;
  /**
   * A node dropped out of the list (it died): what it committed but could not announce
   * before it died is read back (Relay.resync), so its cards still expire here on time.
   */
  nodeLeft?: (ids: string[]) => Promise<void>;
  log(line: string): void;
  now?: () => number;
}

export class LeaseKeeper {
  private readonly active = new Set<string>();
  /** When each lease this node holds was last renewed: one not renewed for a lease is lost. */
  private readonly renewed = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<void>;
  private readonly now: () => number;
  /** The other nodes alive at the last round. */
  private peers = new Set<string>();

  constructor(
    private readonly cluster: Cluster,
    private readonly options: LeaseKeeperOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** Whether this node holds `name`'s work now. */
  holds(name: string): boolean {
    return this.active.has(name);
  }

  /** The first round (awaited: work this node can take starts now), then one every third of a lease. */
  async start(): Promise<void> {
    await this.tick();
    this.timer = setInterval(() => void this.tick(), Math.max(Math.floor(this.cluster.leaseMs / 3), 50));
    this.timer.unref();
  }

  /** One round; rounds never overlap. Exposed for tests. */
  tick(): Promise<void> {
    this.ticking ??= this.round().finally(() => (this.ticking = undefined));
    return this.ticking;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
    for (const work of this.options.works) if (this.active.delete(work.name)) await work.lost();
  }

  private async round(): Promise<void> {
    const { log } = this.options;
    await this.cluster.heartbeat(this.options.url(), this.options.holds()).catch((err: Error) => log(`node list: could not say this node is alive: ${err.message}`));
    if (this.options.nodeLeft) await this.watchPeers(this.options.nodeLeft).catch((err: Error) => log(`node list: could not read it: ${err.message}`));
    for (const work of this.options.works) {
      const held = await this.claim(work.name);
      if (held && !this.active.has(work.name)) {
        this.active.add(work.name);
        await Promise.resolve(work.gained()).catch((err: Error) => log(`${work.name}: could not start: ${err.message}`));
      } else if (!held && this.active.delete(work.name)) {
        log(`${work.name}: another node holds it now; this node stops it.`);
        await Promise.resolve(work.lost()).catch((err: Error) => log(`${work.name}: could not stop: ${err.message}`));
      }
    }
    const sessions = this.options.sessions;
    if (!sessions) return;
    for (const id of sessions.liveIds()) {
      if (await this.claim(sessionLease(id))) continue;
      log(`session ${id}: another node runs it now; this node lets go of its runner.`);
      await sessions.drop(id).catch(() => {});
    }
    await sessions.adopt().catch((err: Error) => log(`sessions: could not take over sessions of stopped nodes: ${err.message}`));
  }

  private async watchPeers(nodeLeft: (ids: string[]) => Promise<void>): Promise<void> {
    const now = new Set((await this.cluster.nodes()).map((n) => n.id).filter((id) => id !== this.cluster.node));
    const left = [...this.peers].filter((id) => !now.has(id));
    this.peers = now;
    if (left.length) await nodeLeft(left);
  }

  /**
   * Renews or takes the lease: true while held. A database that does not answer keeps what
   * this node held until a lease has passed since its last renewal (no one else can take it
   * before then either).
   */
  private async claim(name: string): Promise<boolean> {
    try {
      const { held } = await this.cluster.claim(name);
      if (held) this.renewed.set(name, this.now());
      else this.renewed.delete(name);
      return held;
    } catch {
      const last = this.renewed.get(name);
      const keep = last !== undefined && this.now() - last < this.cluster.leaseMs;
      if (!keep) this.renewed.delete(name);
      return keep;
    }
  }
}
