import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Card } from '../cards/model.js';
import type { NodeLoad } from '../cluster/node-load.js';
import type { RelayEvents } from '../relay/events.js';
import type { Session } from '../store/session-record.js';
import type { Ops } from './ops.js';

// The relay's Prometheus metrics (GET /metrics), each documented in docs/operations.md. Counts
// come from the relay's events (this node's changes only: with several nodes, each counts
// its own and Prometheus sums them) and from the operator events (ops.ts); gauges are read
// when scraped. A registry per relay, so that several relays in one process (the tests) keep
// their counts apart.

export interface MetricSources {
  events: RelayEvents;
  ops: Ops;
  pending(): number;
  load: NodeLoad;
  sessions(): Promise<Session[]>;
  /** The chat channels' outboxes. */
  outboxes(): Promise<{ id: string; queued: number }[]>;
}

const MINUTE = 60;
const HOUR = 3600;
const SECONDS = (ms: number) => ms / 1000;

export class RelayMetrics {
  readonly registry = new Registry();
  readonly storeSeconds: Histogram<'operation'>;

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const created = new Counter({ name: 'askrelay_cards_created_total', help: 'Cards created on this node, by provider.', labelNames: ['provider'], registers });
    const closed = new Counter({ name: 'askrelay_cards_closed_total', help: 'Cards closed on this node, by provider and outcome (answered, skipped, expired, cancelled).', labelNames: ['provider', 'outcome'], registers });
    const answerTime = new Histogram({
      name: 'askrelay_card_answer_seconds',
      help: 'From a card\'s creation to its answer (answered cards only), by provider.',
      labelNames: ['provider'],
      buckets: [5, 15, 30, MINUTE, 2 * MINUTE, 5 * MINUTE, 15 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 4 * HOUR, 8 * HOUR],
      registers,
    });
    const deliveryTime = new Histogram({
      name: 'askrelay_answer_delivery_seconds',
      help: 'From an answer\'s commit to its waiter (session, MCP call, long poll, askrelay ask) taking it, by where it went.',
      labelNames: ['to'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, MINUTE, 10 * MINUTE, HOUR],
      registers,
    });
    new Gauge({ name: 'askrelay_cards_pending', help: 'Cards waiting for an answer (this node keeps every pending card\'s deadline).', registers, collect() { this.set(sources.pending()); } });
    new Gauge({
      name: 'askrelay_open_connections',
      help: 'Long-lived requests open on this node: event streams, long polls, MCP calls waiting on a card.',
      labelNames: ['kind'],
      registers,
      collect() {
        this.set({ kind: 'stream' }, sources.load.streams);
        this.set({ kind: 'long_poll' }, sources.load.waits);
        this.set({ kind: 'mcp_call' }, sources.load.mcpCalls);
      },
    });
    new Gauge({
      name: 'askrelay_sessions',
      help: 'Agent sessions by provider and state (every node sees all of them).',
      labelNames: ['provider', 'state'],
      registers,
      async collect() {
        this.reset();
        for (const s of await sources.sessions()) this.inc({ provider: s.provider, state: s.status });
      },
    });
    new Gauge({
      name: 'askrelay_chat_outbox_depth',
      help: 'Posts and edits a chat platform has not taken yet, by platform.',
      labelNames: ['platform'],
      registers,
      async collect() {
        this.reset();
        for (const o of await sources.outboxes()) this.set({ platform: o.id }, o.queued);
      },
    });
    const providerErrors = new Counter({ name: 'askrelay_provider_errors_total', help: 'Sessions a provider failed (the session ended failed), by provider.', labelNames: ['provider'], registers });
    const chatFailures = new Counter({ name: 'askrelay_chat_failures_total', help: 'Posts a chat platform did not take, by platform and kind (refused for good, or failed and tried again).', labelNames: ['platform', 'kind'], registers });
    const pushFailures = new Counter({ name: 'askrelay_push_failures_total', help: 'Pushes a push service did not take, by service host.', labelNames: ['service'], registers });
    const refused = new Counter({ name: 'askrelay_refused_requests_total', help: 'Requests refused for their token or login (401) or at a limit (413, 429), by reason.', labelNames: ['reason'], registers });
    this.storeSeconds = new Histogram({
      name: 'askrelay_store_seconds',
      help: 'Time of the card store\'s calls (each its own transaction), by operation.',
      labelNames: ['operation'],
      buckets: [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
      registers,
    });

    sources.events.subscribe((name, data, remote) => {
      if (remote || name === 'session.updated') return;
      const card = data as Card;
      if (name === 'card.created') created.inc({ provider: card.provider });
      else if (name === 'card.updated' && card.status !== 'pending') {
        closed.inc({ provider: card.provider, outcome: card.status });
        if (card.status === 'answered' && card.closedAt) answerTime.observe({ provider: card.provider }, SECONDS(Date.parse(card.closedAt) - Date.parse(card.createdAt)));
      } else if (name === 'card.delivery' && card.delivery?.state === 'delivered' && card.closedAt && !card.lateAnswer) {
        deliveryTime.observe({ to: card.delivery.to ?? 'unknown' }, Math.max(0, SECONDS(Date.parse(card.delivery.at) - Date.parse(card.closedAt))));
      }
    });
    sources.ops.subscribe((event, fields) => {
      if (event === 'session.failed') providerErrors.inc({ provider: String(fields.provider) });
      else if (event === 'chat.refused' || event === 'chat.failed') chatFailures.inc({ platform: String(fields.platform), kind: event === 'chat.refused' ? 'refused' : 'failed' });
      else if (event === 'push.failed') pushFailures.inc({ service: String(fields.service) });
      else if (event === 'auth.refused' || event === 'limit.reached') refused.inc({ reason: String(fields.code) });
    });
  }

  /** The text a scraper reads. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** `target` with each method's time observed as its own operation. */
  timed<T extends object>(target: T): T {
    const observe = this.storeSeconds;
    return new Proxy(target, {
      get(object, key, receiver) {
        const value = Reflect.get(object, key, receiver);
        if (typeof value !== 'function' || typeof key !== 'string') return value;
        return (...args: unknown[]) => {
          const end = observe.startTimer({ operation: key });
          const result = (value as (...a: unknown[]) => unknown).apply(object, args);
          if (result instanceof Promise) return result.finally(end);
          end();
          return result;
        };
      },
    });
  }
}
