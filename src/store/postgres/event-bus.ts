import pg from 'pg';

// Relay events across nodes through PostgreSQL itself (LISTEN/NOTIFY): no second broker.
// Each node publishes what it changed; every other node hears it, in the order it was
// published, and re-emits it to its own surfaces (SSE streams, long polls, MCP calls, push,
// chat). A node does not hear its own events back (it emitted them locally already).
//
// NOTIFY carries at most 8000 bytes. An event whose data fits travels whole; a bigger one
// travels as its id, and the receiver loads the current data from the store.

export const CHANNEL = 'askrelay_events';
/** Below PostgreSQL's 8000-byte payload limit, with room for the envelope. */
const MAX_INLINE_BYTES = 7000;
const RECONNECT_MS = { first: 100, max: 5000 };

export interface BusEvent {
  name: string;
  data: unknown;
}

interface Envelope {
  node: string;
  name: string;
  data?: unknown;
  /** Set instead of data when the data was too big to travel: the id to load it by. */
  ref?: string;
}

export interface EventBusOptions {
  /** This node's id: its own events are not handed back to it. */
  node: string;
  /** Loads an event's data that was too big to travel (a card by its id). */
  load(name: string, ref: string): Promise<unknown>;
  /** Where trouble is reported (lost connection, an event that could not be read). */
  log?: (line: string) => void;
  /**
   * Called once listening again after the connection was lost: events published meanwhile
   * were not heard, so the node reloads what it shows (its pending cards, its sessions).
   */
  resync?: () => void;
}

/** What NOTIFY carries for an event: the whole data when it fits, else its id (`ref`) for the receiver to load. */
export function envelope(node: string, name: string, data: unknown, ref: string): string {
  const whole = JSON.stringify({ node, name, data } satisfies Envelope);
  return Buffer.byteLength(whole) <= MAX_INLINE_BYTES ? whole : JSON.stringify({ node, name, ref } satisfies Envelope);
}

export class PostgresEventBus {
  private listener?: pg.Client;
  private readonly handlers = new Set<(event: BusEvent) => void>();
  private stopped = false;
  private retryMs = RECONNECT_MS.first;
  /** Events of other nodes, handed on one at a time so a loaded one cannot overtake. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly pool: pg.Pool,
    private readonly connectionString: string,
    private readonly options: EventBusOptions,
  ) {}

  /** Starts listening; resolves once LISTEN is in place (events published after it are heard). */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on('notification', (message) => {
      if (message.channel === CHANNEL && message.payload) this.receive(message.payload);
    });
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.listener = client;
    this.retryMs = RECONNECT_MS.first;
  }

  /** Hears every other node's events, in order; returns the function that stops hearing. */
  subscribe(handler: (event: BusEvent) => void): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /** Tells the other nodes; `ref` is what `load` finds the data by if it is too big to travel. */
  async publish(name: string, data: unknown, ref: string): Promise<void> {
    await this.pool.query('SELECT pg_notify($1, $2)', [CHANNEL, envelope(this.options.node, name, data, ref)]);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.listener;
    this.listener = undefined;
    await client?.end().catch(() => {});
    await this.queue;
  }

  private receive(payload: string): void {
    let envelope: Envelope;
    try {
      envelope = JSON.parse(payload) as Envelope;
    } catch {
      this.options.log?.(`event bus: an event that is not JSON was ignored (${payload.slice(0, 80)})`);
      return;
    }
    if (envelope.node === this.options.node) return;
    this.queue = this.queue.then(async () => {
      try {
        const data = envelope.ref !== undefined ? await this.options.load(envelope.name, envelope.ref) : envelope.data;
        for (const handler of this.handlers) handler({ name: envelope.name, data });
      } catch (err) {
        this.options.log?.(`event bus: ${envelope.name} ${envelope.ref ?? ''} could not be loaded: ${(err as Error).message}`);
      }
    });
  }

  /** The listening connection went away: listen again, backing off while the database is away. */
  private lost(client: pg.Client, err?: Error): void {
    if (this.stopped || client !== this.listener) return;
    this.listener = undefined;
    this.options.log?.(`event bus: lost the listening connection${err ? ` (${err.message})` : ''}; listening again`);
    client.end().catch(() => {});
    const again = () => {
      if (this.stopped) return;
      this.start().then(() => this.options.resync?.(), () => {
        this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MS.max);
        setTimeout(again, this.retryMs).unref();
      });
    };
    setTimeout(again, this.retryMs).unref();
  }
}
