import type { Card } from '../cards/model.js';
import type { RelayEvents } from '../relay/events.js';
import type { Session } from '../store/session-record.js';
import type { OpsSink } from './ops.js';

// The relay's own events as the operator hears of them: a session's start, stop and failure
// (once each, on the node that made the change), a route's escalation and default answer,
// and at debug level every card created and closed, by id. Returns the unsubscribe.

export function reportRelayEvents(events: RelayEvents, ops: OpsSink): () => void {
  /** Each live session's last status here: a change of status is what gets reported. */
  const seen = new Map<string, Session['status']>();
  return events.subscribe((name, data, remote) => {
    if (remote) return;
    if (name === 'session.updated') {
      const session = data as Session;
      const before = seen.get(session.id);
      if (before === session.status) return;
      const fields = { sessionId: session.id, provider: session.provider, engine: session.engine };
      if (session.status === 'stopped' || session.status === 'failed') {
        seen.delete(session.id);
        if (session.status === 'failed') ops.emit('session.failed', { ...fields, error: session.error });
        else ops.emit('session.stopped', fields);
        return;
      }
      seen.set(session.id, session.status);
      if (before === undefined) ops.emit('session.started', { ...fields, relayMode: session.relayMode });
      return;
    }
    const card = data as Card;
    if (name === 'card.escalated') ops.emit('route.escalated', { cardId: card.id, sessionId: card.sessionId ?? undefined, route: card.route, routedTo: card.routedTo?.join(',') });
    else if (name === 'card.updated' && card.answeredBy?.kind === 'system') ops.emit('route.defaulted', { cardId: card.id, sessionId: card.sessionId ?? undefined, route: card.route });
    if (name === 'card.created') ops.emit('card.created', { cardId: card.id, sessionId: card.sessionId ?? undefined, provider: card.provider, kind: card.kind });
    else if (name === 'card.updated' && card.status !== 'pending') ops.emit('card.closed', { cardId: card.id, sessionId: card.sessionId ?? undefined, provider: card.provider, status: card.status, by: card.answeredBy?.kind });
  });
}
