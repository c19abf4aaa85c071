// The Sessions view's list: one row per session, its status, and its "Other agents may
// answer" switch; the records kept up to date from the list, events and fetches.
import { Unauthorized, api } from './api.js';
import { $, els, h, setText } from './dom.js';
import { pendingEntries } from './board.js';
import { fmtStarted, fmtTime, shortId } from './format.js';
import { providerLabel, providerTitle } from './new-session.js';
import { actions, store } from './store.js';

export const ACTIVE = new Set(['starting', 'running', 'waiting', 'idle', 'stuck']);
const SESSION_STATUS = {
  starting: ['Starting', 'The agent is starting.'],
  running: ['Working', 'The agent is working on its turn.'],
  waiting: ['Waiting on you', 'A card is open: answer it and the agent goes on.'],
  idle: ['Idle', 'The turn ended: the agent waits for your next message.'],
  stuck: ['Stuck?', 'No activity from the agent for a while.'],
  stopped: ['Stopped', 'The session was stopped.'],
  failed: ['Failed', 'The provider gave up.'],
};

export const providerChip = (s) =>
  h('span', { class: 'chip chip-provider', title: providerTitle(s.provider, s.engine), dataset: { testid: 'session-provider' } }, providerLabel(s.provider, s.engine));

export async function reloadSessions() {
  let list;
  try {
    list = (await api('/api/sessions')).sessions;
  } catch {
    return;
  }
  const ids = new Set(list.map((s) => s.id));
  for (const id of [...store.sessions.keys()]) {
    if (ids.has(id)) continue;
    store.sessions.delete(id);
    store.sessionRows.get(id)?.remove();
    store.sessionRows.delete(id);
  }
  for (const s of list) upsertSession(s);
  refreshSessionCounts();
}

/** Signed out: the sessions leave the page (the open one first). */
export function forgetSessions() {
  store.sessions.clear();
  for (const row of store.sessionRows.values()) row.remove();
  store.sessionRows.clear();
  store.sessionTitles.clear();
  store.titleFetches.clear();
  store.messageDrafts.clear();
  refreshSessionCounts();
}

/** A session record from the list, an event or a fetch (which also carries the transcript). */
export function upsertSession(s, { fromDetail = false } = {}) {
  if (!s || typeof s.id !== 'string') return;
  const { transcript, ...record } = s;
  const known = store.sessions.get(s.id);
  if (!known || !(known.updatedAt > record.updatedAt)) store.sessions.set(s.id, record); // never step back to an older copy
  if (transcript && !store.sessionTitles.has(s.id)) {
    const first = transcript.find((e) => e.role === 'user');
    if (first) store.sessionTitles.set(s.id, first.text);
  }
  renderSessionRow(store.sessions.get(s.id));
  refreshSessionCounts();
  if (store.opened?.id === s.id) {
    actions.applySessionHead(store.opened, store.sessions.get(s.id));
    if (!fromDetail) actions.refreshOpened(); // the event carries no transcript: fetch it
  } else if (!store.sessionTitles.has(s.id)) {
    fetchTitle(s.id);
  }
}

/** The list shows each session by its first prompt, which only the full record carries. */
async function fetchTitle(id) {
  if (store.titleFetches.has(id) || store.titleFetches.size >= 100) return;
  store.titleFetches.add(id);
  try {
    upsertSession(await api(`/api/sessions/${encodeURIComponent(id)}`), { fromDetail: true });
  } catch {
    /* it keeps its short id as a name */
  }
}

export function sessionName(id) {
  const title = store.sessionTitles.get(id);
  return title ? title.trim().split('\n')[0] : `Session ${shortId(id)}`;
}

function refreshSessionCounts() {
  const all = [...store.sessions.values()];
  const active = all.filter((s) => ACTIVE.has(s.status)).length;
  const waiting = all.filter((s) => s.status === 'waiting').length;
  setText(els.sessionCount, String(all.length));
  setText(els.tabSessionsCount, active ? String(active) : '');
  els.tabSessionsCount.classList.toggle('attention', waiting > 0);
  els.tabSessionsCount.title = active ? `${active} active${waiting ? `, ${waiting} waiting on you` : ''}` : '';
  els.sessionsEmpty.hidden = all.length > 0;
}

export function statusBadge(s) {
  const [label, why] = SESSION_STATUS[s.status] ?? [s.status, ''];
  if (s.status === 'waiting') {
    return h('a', {
      class: 'badge badge-waiting',
      href: '#cards',
      title: 'Open the card it waits on',
      dataset: { testid: 'session-status', status: s.status },
      onclick: (e) => {
        e.preventDefault();
        goToSessionCard(s.id);
      },
    }, label, h('span', { class: 'arrow', 'aria-hidden': 'true' }, '→'));
  }
  return h('span', { class: `badge badge-${s.status}`, title: why, dataset: { testid: 'session-status', status: s.status } }, label);
}

function renderSessionRow(s) {
  const link = h('a', { class: 'session-link', href: `#sessions/${encodeURIComponent(s.id)}`, dataset: { testid: 'session-link' } }, sessionName(s.id));
  const row = h('div', { class: `session-row status-${s.status}`, role: 'listitem', dataset: { testid: 'session', sessionId: s.id, status: s.status } },
    h('div', { class: 'session-row-main' },
      link,
      h('div', { class: 'session-meta' },
        providerChip(s),
        s.model ? h('span', { class: 'meta-item' }, s.model) : null,
        h('span', { class: 'meta-item', title: fmtTime(s.createdAt) }, `started ${fmtStarted(s.createdAt)}`),
        h('span', { class: 'meta-item mono' }, shortId(s.id)),
      ),
      s.status === 'failed' ? h('p', { class: 'session-error', title: s.error, dataset: { testid: 'session-error' } }, s.error || 'The provider gave up.') : null,
      s.status === 'stuck' ? h('p', { class: 'session-warning' }, 'No activity for a while.') : null,
      agentsSwitch(s),
      permissionErrorLine(s.id),
    ),
    statusBadge(s),
  );
  const old = store.sessionRows.get(s.id);
  store.sessionRows.set(s.id, row);
  if (old) {
    const focused = old.contains(document.activeElement) ? document.activeElement : null;
    old.replaceWith(row);
    if (focused?.classList.contains('session-link')) link.focus({ preventScroll: true });
    else if (focused?.dataset.testid === 'agents-may-answer') $('[data-testid="agents-may-answer"]', row)?.focus({ preventScroll: true });
    return;
  }
  // Newest first.
  const after = [...els.sessionList.children].find((el) => (store.sessions.get(el.dataset.sessionId)?.createdAt ?? '') < s.createdAt);
  els.sessionList.insertBefore(row, after ?? null);
}

/**
 * The session's "Other agents may answer its questions" switch (PATCH agentsMayAnswer).
 * Live sessions only: a stopped or failed one shows its last setting, greyed.
 */
export function agentsSwitch(s) {
  const input = h('input', {
    type: 'checkbox',
    role: 'switch',
    dataset: { testid: 'agents-may-answer' },
    onchange: (e) => setAgentsMayAnswer(s.id, e.target.checked, e.target),
  });
  const label = h('label', { class: 'toggle session-agents' },
    input, h('span', { class: 'toggle-track', 'aria-hidden': 'true' }), 'Other agents may answer its questions');
  syncAgentsSwitch(label, s);
  return label;
}

/** Brings a switch up to date in place (the open session's keeps its focus that way). */
export function syncAgentsSwitch(label, s) {
  const input = label.querySelector('input');
  const ended = !ACTIVE.has(s.status);
  const busy = store.permissionBusy.has(s.id);
  // While a change is on its way, a re-render shows the value asked for.
  input.checked = busy ? store.permissionBusy.get(s.id) : Boolean(s.agentsMayAnswer);
  input.disabled = ended;
  if (busy) input.setAttribute('aria-busy', 'true');
  else input.removeAttribute('aria-busy');
  label.classList.toggle('ended', ended);
  label.title = ended
    ? 'The session has ended'
    : 'Another session’s agent may answer this session’s questions (approvals stay yours alone)';
}

export function permissionErrorLine(id) {
  const message = store.permissionErrors.get(id);
  return message ? h('p', { class: 'session-error', role: 'alert', dataset: { testid: 'agents-may-answer-error' } }, message) : null;
}

async function setAgentsMayAnswer(id, allowed, input) {
  // One change at a time; the switch is not disabled meanwhile, so it keeps the focus.
  if (store.permissionBusy.has(id)) {
    input.checked = !allowed;
    return;
  }
  store.permissionBusy.set(id, allowed);
  store.permissionErrors.delete(id);
  input.setAttribute('aria-busy', 'true');
  let updated = null;
  let failure = null;
  try {
    updated = await api(`/api/sessions/${encodeURIComponent(id)}`, { method: 'PATCH', json: { agentsMayAnswer: allowed } });
  } catch (err) {
    failure = err;
  }
  store.permissionBusy.delete(id);
  input.removeAttribute('aria-busy');
  if (updated) {
    upsertSession(updated);
    return;
  }
  if (!(failure instanceof Unauthorized)) store.permissionErrors.set(id, `Could not change who may answer: ${failure.message}`);
  // Back to the setting the relay has, with the error under it.
  const known = store.sessions.get(id);
  if (known) upsertSession({ ...known });
}

export function pendingCardOf(sessionId) {
  return pendingEntries().find((e) => e.card.sessionId === sessionId)?.card;
}

export async function goToSessionCard(sessionId) {
  let card = pendingCardOf(sessionId);
  if (!card) {
    try {
      card = (await api(`/api/cards?sessionId=${encodeURIComponent(sessionId)}&status=pending`)).cards[0];
    } catch {
      return;
    }
  }
  if (card) actions.revealCard(card.id);
  else actions.navigate('#cards');
}
