// One session on screen (#sessions/<id>): its head, banner, transcript and composer.
import { Unauthorized, api } from './api.js';
import { autosize, els, h, setText } from './dom.js';
import { fmtStarted } from './format.js';
import { providerName } from './new-session.js';
import { appendTranscript } from './session-transcript.js';
import {
  ACTIVE, agentsSwitch, goToSessionCard, pendingCardOf, permissionErrorLine, providerChip, sessionName, statusBadge,
  syncAgentsSwitch, upsertSession,
} from './sessions.js';
import { store } from './store.js';

const COMPOSER_WHY = {
  starting: 'The agent is starting. You can write once its turn ends.',
  running: 'The agent is working. You can write once its turn ends.',
  waiting: 'The agent is waiting on a card: answer it first.',
  stuck: 'The agent has shown no activity for a while. Wait, or stop the session.',
  stopped: 'The session is stopped: start a new one to go on.',
  failed: 'The session failed: start a new one to go on.',
};

export function openSessionView(id) {
  els.sessionIndex.hidden = true;
  els.sessionDetail.hidden = false;
  if (store.opened?.id === id) return;
  saveDraft();
  store.opened = buildSessionView(id);
  els.sessionDetail.replaceChildren(store.opened.root);
  const known = store.sessions.get(id);
  if (known) applySessionHead(store.opened, known);
  refreshOpened();
}

export function closeSessionView() {
  saveDraft();
  store.opened = null;
  els.sessionDetail.replaceChildren();
  els.sessionDetail.hidden = true;
  els.sessionIndex.hidden = false;
}

function saveDraft() {
  const { opened } = store;
  if (!opened) return;
  const text = opened.parts.input.value;
  if (text.trim()) store.messageDrafts.set(opened.id, text);
  else store.messageDrafts.delete(opened.id);
}

/** A card of this session opened or closed: its waiting banner names the question. */
export function sessionCardChanged(sessionId) {
  const { opened } = store;
  if (opened?.id === sessionId && opened.session) applySessionHead(opened, opened.session);
}

function buildSessionView(id) {
  const o = { id, session: null, count: 0, loading: false, dirty: false, first: true, busy: false, refocus: false };
  const p = {};
  o.parts = p;
  p.chips = h('div', { class: 'chips' });
  p.badge = h('span');
  p.title = h('h2', { class: 'session-heading', dataset: { testid: 'session-title' } }, sessionName(id));
  p.facts = h('p', { class: 'muted small session-facts' }, id);
  p.agents = h('div', { class: 'session-agents-row' });
  p.stop = h('button', { type: 'button', class: 'danger-button', dataset: { testid: 'stop-session' }, onclick: () => stopSession(o) }, 'Stop');
  p.banner = h('div', { class: 'banner', dataset: { testid: 'session-banner' }, role: 'status', hidden: true });
  p.transcript = h('ol', { class: 'transcript', dataset: { testid: 'transcript' }, 'aria-label': 'Transcript' });
  p.working = h('p', { class: 'working muted small', dataset: { testid: 'working' }, hidden: true },
    h('span', { class: 'dots-anim', 'aria-hidden': 'true' }, h('span'), h('span'), h('span')), 'Working…');
  p.input = h('textarea', {
    class: 'free-text',
    rows: '1',
    maxlength: '20000',
    'aria-label': 'Next message',
    placeholder: 'Next message…',
    dataset: { testid: 'message-input' },
    value: store.messageDrafts.get(id) ?? '',
    oninput: (e) => autosize(e.target),
    onkeydown: (e) => {
      if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        sendMessage(o);
      }
    },
  });
  p.send = h('button', { type: 'submit', class: 'primary', dataset: { testid: 'send-message' } }, 'Send');
  p.hint = h('p', { class: 'composer-hint muted small', dataset: { testid: 'composer-hint' }, role: 'status' });
  p.error = h('p', { class: 'error', dataset: { testid: 'composer-error' }, role: 'alert', hidden: true });
  p.missing = h('p', { class: 'error', dataset: { testid: 'session-missing' }, hidden: true });
  o.root = h('div', { class: 'session-view', dataset: { sessionId: id } },
    h('a', { class: 'back-link', href: '#sessions', dataset: { testid: 'back-to-sessions' } }, '← All sessions'),
    p.missing,
    h('header', { class: 'panel session-head' },
      h('div', { class: 'session-head-top' }, p.chips, p.badge),
      p.title,
      p.agents,
      h('div', { class: 'session-head-foot' }, p.facts, p.stop),
    ),
    p.banner,
    p.transcript,
    p.working,
    h('form', {
      class: 'composer',
      dataset: { testid: 'composer' },
      onsubmit: (e) => {
        e.preventDefault();
        sendMessage(o);
      },
    }, p.error, h('div', { class: 'reply-row' }, p.input, p.send), p.hint),
  );
  setComposer(o);
  return o;
}

export function applySessionHead(o, s) {
  if (!s) return;
  const wasIdle = o.session?.status === 'idle';
  o.session = s;
  const p = o.parts;
  o.root.dataset.status = s.status;
  // (replaceChildren would show a null as the text "null")
  p.chips.replaceChildren(...[
    providerChip(s),
    s.model ? h('span', { class: 'chip', title: 'Model' }, s.model) : null,
    h('span', { class: 'chip', title: s.relayMode === 'manual' ? 'When nobody answers in time, the agent stops and waits for you' : 'When nobody answers in time, the agent goes on with its best judgement' }, s.relayMode),
  ].filter(Boolean));
  if (p.agentsSwitch) syncAgentsSwitch(p.agentsSwitch, s);
  else p.agents.prepend((p.agentsSwitch = agentsSwitch(s)));
  p.agentsError?.remove();
  p.agentsError = permissionErrorLine(s.id);
  if (p.agentsError) p.agents.append(p.agentsError);
  const badge = statusBadge(s);
  p.badge.replaceWith(badge);
  p.badge = badge;
  setText(p.title, sessionName(s.id));
  setText(p.facts, `Started ${fmtStarted(s.createdAt)} · ${s.id}`);
  p.stop.hidden = !ACTIVE.has(s.status);
  renderBanner(o, s);
  p.working.hidden = !(s.status === 'running' || s.status === 'starting');
  setText(p.working.lastChild, `${providerName(s.provider)} is working…`);
  setComposer(o);
  if (s.status === 'idle' && !wasIdle && o.refocus && (document.activeElement === document.body || document.activeElement === null)) {
    o.refocus = false;
    p.input.focus({ preventScroll: true });
  }
}

function renderBanner(o, s) {
  const { banner } = o.parts;
  banner.className = `banner banner-${s.status}`;
  banner.hidden = !['waiting', 'stuck', 'failed', 'stopped'].includes(s.status);
  const text = (...children) => h('div', { class: 'banner-text' }, ...children);
  if (s.status === 'waiting') {
    const card = pendingCardOf(s.id);
    const question = card ? card.title || card.questions[0]?.text : null;
    banner.replaceChildren(
      text(h('strong', {}, 'Waiting on you'), question ? h('span', { class: 'banner-question' }, question) : null),
      h('button', { type: 'button', class: 'primary', dataset: { testid: 'answer-card' }, onclick: () => goToSessionCard(s.id) }, 'Answer the card →'),
    );
  } else if (s.status === 'stuck') {
    banner.replaceChildren(text(h('strong', {}, 'No activity for a while'),
      h('span', {}, 'The agent may be stuck. Wait a little longer, or stop the session.')));
  } else if (s.status === 'failed') {
    banner.replaceChildren(text(h('strong', {}, 'The session failed'),
      h('span', { title: s.error, dataset: { testid: 'session-error' } }, s.error || 'The provider gave up.')));
  } else if (s.status === 'stopped') {
    banner.replaceChildren(text(h('strong', {}, 'Stopped'), h('span', {}, 'The agent ended; cards it left open were cancelled.')));
  } else {
    banner.replaceChildren();
  }
}

function setComposer(o) {
  const status = o.session?.status;
  const open = status === 'idle' && !o.busy;
  o.parts.input.disabled = !open;
  o.parts.send.disabled = !open;
  const why = o.busy ? 'Sending…' : status ? COMPOSER_WHY[status] ?? '' : 'Loading…';
  setText(o.parts.hint, open ? 'Enter sends, Shift+Enter starts a new line.' : why);
  o.parts.hint.classList.toggle('why', !open);
}

/** Fetches the open session with its transcript; an event meanwhile fetches once more. */
export async function refreshOpened() {
  const o = store.opened;
  if (!o) return;
  if (o.loading) {
    o.dirty = true;
    return;
  }
  o.loading = true;
  try {
    do {
      o.dirty = false;
      let s;
      try {
        s = await api(`/api/sessions/${encodeURIComponent(o.id)}`);
      } catch (err) {
        if (store.opened === o && err.status === 404) {
          setText(o.parts.missing, `There is no session “${o.id}”.`);
          o.parts.missing.hidden = false;
        }
        return;
      }
      if (store.opened !== o) return;
      upsertSession(s, { fromDetail: true });
      appendTranscript(o, s.transcript ?? []);
    } while (o.dirty && store.opened === o);
  } finally {
    o.loading = false;
  }
}

function showComposerError(o, err) {
  if (err instanceof Unauthorized) return;
  setText(o.parts.error, err.message);
  o.parts.error.hidden = false;
}

async function sendMessage(o) {
  const text = o.parts.input.value.trim();
  if (!text || o.busy || o.session?.status !== 'idle') return;
  o.busy = true;
  o.parts.error.hidden = true;
  setComposer(o);
  try {
    const s = await api(`/api/sessions/${encodeURIComponent(o.id)}/messages`, { method: 'POST', json: { text } });
    o.parts.input.value = '';
    autosize(o.parts.input);
    store.messageDrafts.delete(o.id);
    o.refocus = true;
    o.busy = false;
    upsertSession(s);
  } catch (err) {
    showComposerError(o, err);
  } finally {
    o.busy = false;
    setComposer(o);
  }
}

async function stopSession(o) {
  if (!ACTIVE.has(o.session?.status)) return;
  if (!window.confirm('Stop this session? The agent ends its work, and any card it waits on is cancelled.')) return;
  o.parts.stop.disabled = true;
  try {
    upsertSession(await api(`/api/sessions/${encodeURIComponent(o.id)}`, { method: 'DELETE' }));
  } catch (err) {
    showComposerError(o, err);
  } finally {
    o.parts.stop.disabled = false;
  }
}
