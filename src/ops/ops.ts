import type { Logger } from 'pino';

// What an operator wants to hear of: one table of events, each with its level and the
// sentence it is logged with. The relay's parts emit them with ids and counts (never a token
// and never an answer's text); the log writes each as one JSON line (log.ts) and the metrics
// count them (metrics.ts). A repeated failure (the same outage, attempt after attempt) is
// emitted `quiet`: counted every time, logged only at debug.

export const OPS_EVENTS = {
  'relay.started': { level: 'info', message: 'askrelay is listening' },
  'relay.stopping': { level: 'info', message: 'askrelay is stopping' },
  'relay.error': { level: 'error', message: 'a request hit an unexpected error' },
  'relay.warning': { level: 'warn', message: 'the relay reported a problem' },
  'store.unavailable': { level: 'warn', message: 'the store did not answer a request' },
  'session.started': { level: 'info', message: 'a session started' },
  'session.stopped': { level: 'info', message: 'a session stopped' },
  'session.failed': { level: 'warn', message: 'a session failed: its provider gave up' },
  'card.created': { level: 'debug', message: 'a card was created' },
  'card.closed': { level: 'debug', message: 'a card was closed' },
  'route.escalated': { level: 'info', message: 'a card nobody answered in time went to more people (its route\'s escalation)' },
  'route.defaulted': { level: 'info', message: 'a card nobody answered was answered by its route\'s default' },
  'auth.refused': { level: 'warn', message: 'a request was refused: no valid token or login' },
  'limit.reached': { level: 'warn', message: 'a request was refused at a limit' },
  'chat.refused': { level: 'warn', message: 'a chat platform refused a post for good' },
  'chat.failed': { level: 'warn', message: 'a chat platform did not take a post; it is tried again' },
  'push.failed': { level: 'warn', message: 'a push service did not take a push' },
} as const satisfies Record<string, { level: 'debug' | 'info' | 'warn' | 'error'; message: string }>;

export type OpsEvent = keyof typeof OPS_EVENTS;
export type OpsFields = Record<string, string | number | boolean | undefined>;
export type OpsListener = (event: OpsEvent, fields: OpsFields) => void;

/** What the relay's parts are handed: somewhere to say what happened. */
export interface OpsSink {
  emit(event: OpsEvent, fields?: OpsFields, options?: { quiet?: boolean }): void;
}

export const SILENT_OPS: OpsSink = { emit() {} };

export class Ops implements OpsSink {
  private readonly listeners = new Set<OpsListener>();

  constructor(readonly log: Logger) {}

  emit(event: OpsEvent, fields: OpsFields = {}, options: { quiet?: boolean } = {}): void {
    const { level, message } = OPS_EVENTS[event];
    this.log[options.quiet ? 'debug' : level]({ event, ...fields }, message);
    for (const listener of this.listeners) listener(event, fields);
  }

  subscribe(listener: OpsListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** For the parts that report in sentences (their `log` option): each line a warning. */
  readonly warn = (line: string): void => this.emit('relay.warning', { detail: line.replace(/^askrelay: /, '') });
}
