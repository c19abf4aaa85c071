// Pure words and times for the page: no DOM, no clock unless passed one. Unit-tested in
// test/web/format.test.ts.

export const shortId = (id) => String(id).slice(0, 8);
export const capitalize = (text) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * A card's time left: "42s left", "3m 5s left", "7h 59m left", "3d 1h left". Written as the
 * terminal writes it (durationText in src/cli/format.ts; test/web/format.test.ts holds
 * them to the same words).
 */
export function fmtLeft(ms) {
  if (ms <= 0) return 'expiring';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s left`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s left`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m left`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h left`;
}

export function fmtTime(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
}

export function fmtClock(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString([], { hour: 'numeric', minute: '2-digit' });
}

/** Today's sessions by the clock, older ones by the date too. */
export function fmtStarted(iso, now = new Date()) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toDateString() === now.toDateString() ? fmtClock(iso) : fmtTime(iso);
}

const STATUS_WORD = { answered: 'Answered', skipped: 'Skipped', expired: 'Expired', cancelled: 'Cancelled' };

/** The line a closed card shows: "Answered: Postgres", "Expired: nobody answered in time". */
export function describeClosed(card) {
  const word = STATUS_WORD[card.status] ?? card.status;
  if (card.status === 'answered') return `${word}: ${describeAnswer(card)}`;
  if (card.status === 'expired') return `${word}: nobody answered in time`;
  if (card.status === 'cancelled') return `${word}: the session stopped`;
  return word;
}

/** The card as its asker reads a late answer: answered with it (src/cards/answer.ts asAnswered, for the page). */
export function asAnswered(card) {
  if (!card.lateAnswer) return card;
  const { answer, answeredBy, lateAt } = card.lateAnswer;
  return { ...card, status: 'answered', answer, answeredBy, closedAt: lateAt };
}

const DELIVERED_TO = { session: 'to the session', mcp: 'to the MCP client', 'long-poll': 'to the long poll', ask: 'to askrelay ask' };

/**
 * Where a closed card's answer got to (docs/api.md, "Delivery"), with its late answer:
 * "Delivered to the session, 10:43.", "Late answer: SQLite. Not delivered: nobody was
 * waiting for it.". Empty when nothing was answered.
 */
export function deliveryText(card, clock = fmtClock) {
  const d = card.delivery;
  if (!d) return '';
  const late = card.lateAnswer ? `Late answer: ${describeAnswer(asAnswered(card))}. ` : '';
  if (d.state === 'delivered') return `${late}Delivered${d.to ? ` ${DELIVERED_TO[d.to] ?? `to ${d.to}`}` : ''}, ${clock(d.at)}.`;
  if (d.state === 'undelivered') return `${late}Not delivered: nobody was waiting for it.`;
  return `${late}Sent; the agent has not taken it yet.`;
}

export function describeAnswer(card) {
  const answer = card.answer ?? {};
  const parts = card.questions.map((q) => {
    const entry = answer[q.id];
    if (!entry) return null;
    const picked = entry.selected.join(', ');
    const value = [picked, entry.text ? `“${entry.text}”` : ''].filter(Boolean).join(' + ');
    return card.questions.length > 1 ? `${q.header || q.id}: ${value}` : value;
  });
  return parts.filter(Boolean).join('; ');
}

/**
 * An answer (or skip) not given by you here, for a badge next to the card's chips; null for
 * your own. Another agent's names the agent and the surface it used ("answered by agent
 * s_3dfac9 (relay-tool)") and, for a session, leads to it; a person's in a chat channel
 * names the channel and the user there ("answered in telegram (42)").
 * @returns {null | {kind: 'channel', label: string, title: string, surface: string, user: string}
 *   | {kind: 'agent', label: string, title: string, surface: string, agentId: string, session: boolean}}
 */
export function answeredBy(card) {
  const closed = card.status === 'answered' || card.status === 'skipped';
  const by = closed ? card.answeredBy : undefined;
  if (!by || (by.kind === 'human' && by.id === 'operator')) return null;
  const verb = card.status === 'skipped' ? 'skipped' : 'answered';
  if (by.kind === 'system') {
    const route = String(by.id).replace(/^route:/, '');
    return { kind: 'route', label: `${verb} by route ${route} (its default)`, title: `Nobody answered in time: the route “${route}” answered with its default`, surface: by.surface, route };
  }
  if (by.kind === 'human') {
    const user = String(by.id).slice(String(by.id).indexOf(':') + 1);
    return { kind: 'channel', label: `${verb} in ${by.surface} (${user})`, title: `${capitalize(verb)} in ${by.surface} by user ${user}`, surface: by.surface, user };
  }
  const session = /^s_/.test(String(by.id));
  return {
    kind: 'agent',
    label: `${verb} by agent ${session ? shortId(by.id) : by.id} (${by.surface})`,
    title: `${capitalize(verb)} by ${session ? `the agent of session ${by.id}` : `the agent “${by.id}”`}, through ${by.surface}, not by you`,
    surface: by.surface,
    agentId: by.id,
    session,
  };
}

const OPERATOR_PLACE = { web: 'on the page', cli: 'in the terminal', api: 'through the API' };
const AGENT_ROUTE = { 'relay-tool': 'the relay tool', mcp: 'MCP' };

/**
 * Who closed a card and when, for Recent: "answered by you on the page, 10:42", "answered by
 * s_8c29ab12 through the relay tool, 10:45", "skipped by 42 in telegram, 9:01", "nobody
 * answered; expired 11:00". `clock` formats the time (fmtClock; tests pass their own).
 */
export function closedByText(card, clock = fmtClock) {
  const at = card.closedAt ? clock(card.closedAt) : '';
  if (card.status === 'expired') return `nobody answered; expired${at ? ` ${at}` : ''}`;
  if (card.status === 'cancelled') return `cancelled${at ? ` ${at}` : ''}: the session stopped`;
  const verb = card.status === 'skipped' ? 'skipped' : 'answered';
  const by = card.answeredBy;
  let who = '';
  if (by?.kind === 'human' && by.id === 'operator') who = `by you ${OPERATOR_PLACE[by.surface] ?? `(${by.surface})`}`;
  else if (by?.kind === 'human') who = `by ${String(by.id).slice(String(by.id).indexOf(':') + 1)} in ${by.surface}`;
  else if (by?.kind === 'system') who = `by route ${String(by.id).replace(/^route:/, '')} (its default)`;
  else if (by) who = `by ${/^s_/.test(String(by.id)) ? shortId(by.id) : by.id} through ${AGENT_ROUTE[by.surface] ?? by.surface}`;
  return [verb, who].filter(Boolean).join(' ') + (at ? `, ${at}` : '');
}

/**
 * Who a routed card goes to (docs/routing.md), for the chip beside its provider: "→ ada,
 * telegram", its title naming the rule and whether only they see it; null for a card that
 * matched no route (it goes to everyone).
 * @returns {null | {label: string, title: string}}
 */
export function routeText(card) {
  if (!card.routedTo?.length) return null;
  const to = card.routedTo.join(', ');
  const restricted = card.restricted ? ' Only they (and the operator) see it.' : '';
  const next = card.status === 'pending' ? card.escalations?.find((s) => !s.done) : undefined;
  const later = next ? ` Goes to ${next.to.join(', ')} too at ${fmtClock(next.at)} if still open.` : '';
  return { label: `→ ${to}`, title: `Route “${card.route}”: for ${to}.${restricted}${later}` };
}

/**
 * An approval's text is what would run or change: a command, a diff, a plan. Its first
 * paragraph ("Run this command?") stays prose; the rest is shown verbatim, monospace.
 * @returns {null | {lead: string, code: string}} null: plain prose
 */
export function approvalText(card, text) {
  const verbatim =
    card.kind === 'approval' &&
    (String(card.tool ?? '').startsWith('permission:') || card.tool === 'ExitPlanMode' || text.trim().includes('\n'));
  if (!verbatim) return null;
  const trimmed = text.replace(/^\s*\n|\s+$/g, '');
  const cut = trimmed.indexOf('\n\n');
  const lead = cut > 0 && !trimmed.slice(0, cut).includes('\n') ? trimmed.slice(0, cut) : '';
  const code = lead ? trimmed.slice(cut).replace(/^\n+/, '') : trimmed;
  return { lead, code };
}

/** What an address shows. Pure: `hash` is location.hash without its "#". */
export function parseRoute(hash) {
  try {
    hash = decodeURIComponent(hash);
  } catch {
    /* a malformed escape: use it as it is */
  }
  const view = hash === 'sessions' || hash.startsWith('sessions/') ? 'sessions' : 'cards';
  // #card=<id>: the link a notification opens. The Cards view, scrolled to that card.
  const linkedCard = hash.startsWith('card=') ? hash.slice('card='.length) : null;
  const sessionId = view === 'sessions' ? hash.slice('sessions/'.length) || null : null;
  return { view, linkedCard, sessionId };
}
