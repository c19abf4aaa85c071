// askrelay's web page: every pending card, live. Plain DOM, no build step, nothing fetched
// from elsewhere. Card text comes from agents and is untrusted: it only ever reaches the
// page through textContent and attribute values, never as markup.

const RECENT_AFTER_MS = 6000; // a closed card stays in place this long, then moves to Recent
const RECENT_MAX = 20;
const RETRY_MS = 2000;

/** @type {Map<string, {card: any, el: HTMLElement, ui: any}>} */
const shown = new Map();
let activeId = null; // the card the user last touched: number keys go there
let events = null;
let retryTimer = null;
let signedIn = false;

const $ = (sel, root = document) => root.querySelector(sel);
const els = {
  login: $('[data-testid="login"]'),
  loginForm: $('[data-testid="login"] form'),
  tokenInput: $('[data-testid="token-input"]'),
  loginError: $('[data-testid="login-error"]'),
  loginSubmit: $('[data-testid="login-submit"]'),
  board: $('[data-testid="board"]'),
  pending: $('[data-testid="pending-cards"]'),
  recent: $('[data-testid="recent"]'),
  recentList: $('[data-testid="recent-cards"]'),
  empty: $('[data-testid="empty"]'),
  count: $('[data-testid="pending-count"]'),
  conn: $('[data-testid="connection"]'),
  logout: $('[data-testid="logout"]'),
  tabs: $('[data-testid="tabs"]'),
  tabCardsCount: $('[data-testid="tab-cards-count"]'),
  tabSessionsCount: $('[data-testid="tab-sessions-count"]'),
  sessions: $('[data-testid="sessions"]'),
  sessionIndex: $('[data-testid="session-index"]'),
  sessionList: $('[data-testid="session-list"]'),
  sessionsEmpty: $('[data-testid="sessions-empty"]'),
  sessionCount: $('[data-testid="session-count"]'),
  sessionDetail: $('[data-testid="session-detail"]'),
  newSession: $('[data-testid="new-session"]'),
  newSessionForm: $('[data-testid="new-session-form"]'),
  newSessionError: $('[data-testid="new-session-error"]'),
  newSessionCancel: $('[data-testid="new-session-cancel"]'),
  startSession: $('[data-testid="start-session"]'),
  pushToggle: $('[data-testid="push-toggle"]'),
  pushMessage: $('[data-testid="push-message"]'),
  pushMessageText: $('[data-testid="push-message-text"]'),
  pushMessageClose: $('[data-testid="push-message-close"]'),
};

// ---------------------------------------------------------------- DOM helper

let uid = 0;
const nextId = (prefix) => `${prefix}-${++uid}`;

/**
 * h('button', {class: 'x', dataset: {testid: 'skip'}, onclick}, 'Skip'): strings become
 * text nodes, so nothing passed here is ever parsed as HTML.
 */
function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'dataset') {
      for (const [name, v] of Object.entries(value)) if (v !== undefined && v !== null) el.dataset[name] = v;
    }
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'value' || (key in el && typeof value !== 'string')) el[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

// ---------------------------------------------------------------- API

class Unauthorized extends Error {}

async function api(path, { method = 'GET', json } = {}) {
  let res;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: json === undefined ? { accept: 'application/json' } : { 'content-type': 'application/json', accept: 'application/json' },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
  } catch {
    throw Object.assign(new Error('Could not reach the relay. Check that it is running, then try again.'), { status: 0 });
  }
  let body = null;
  try {
    body = await res.json();
  } catch {
    /* an empty or non-JSON body */
  }
  if (res.status === 401 && path !== '/api/login') {
    showLogin(signedIn ? 'Your session ended. Enter the relay token again.' : undefined);
    throw new Unauthorized('unauthorized');
  }
  if (!res.ok) {
    const message = body?.error?.message ?? `The relay answered ${res.status}.`;
    throw Object.assign(new Error(message), { status: res.status, code: body?.error?.code, card: body?.card });
  }
  return body;
}

// ---------------------------------------------------------------- sign in / out

function showLogin(message) {
  signedIn = false;
  stopEvents();
  setConn('offline');
  els.board.hidden = true;
  els.sessions.hidden = true;
  els.tabs.hidden = true;
  els.logout.hidden = true;
  els.pushToggle.hidden = true;
  hidePushMessage();
  els.conn.hidden = true;
  els.login.hidden = false;
  setText(els.loginError, message ?? '');
  els.loginError.hidden = !message;
  els.loginError.classList.add('note');
  els.tokenInput.focus();
}

els.loginForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const token = els.tokenInput.value.trim();
  if (!token) {
    showLoginError('Enter the relay token.');
    return;
  }
  els.loginSubmit.disabled = true;
  try {
    await api('/api/login', { method: 'POST', json: { token } });
    els.tokenInput.value = '';
    els.loginError.hidden = true;
    await start();
  } catch (err) {
    showLoginError(err.status === 401 ? 'That is not the relay token. Check it and try again.' : err.message);
    els.tokenInput.select();
  } finally {
    els.loginSubmit.disabled = false;
  }
});

function showLoginError(message) {
  setText(els.loginError, message);
  els.loginError.classList.remove('note');
  els.loginError.hidden = false;
}

els.logout.addEventListener('click', async () => {
  try {
    await api('/api/logout', { method: 'POST' });
  } catch {
    /* signed out locally either way */
  }
  for (const { el } of shown.values()) el.remove();
  shown.clear();
  refreshBoard();
  forgetSessions();
  showLogin();
});

async function start() {
  const ok = await reload();
  if (!ok) return;
  signedIn = true;
  els.login.hidden = true;
  els.tabs.hidden = false;
  els.logout.hidden = false;
  els.conn.hidden = false;
  route();
  connect();
  syncPush();
}

// ---------------------------------------------------------------- live updates

function setConn(state) {
  els.conn.dataset.state = state;
  setText(els.conn, { live: 'Live', reconnecting: 'Reconnecting…', offline: 'Offline' }[state]);
}

function stopEvents() {
  clearTimeout(retryTimer);
  events?.close();
  events = null;
}

function connect() {
  stopEvents();
  const source = new EventSource('/api/events');
  events = source;
  source.addEventListener('open', () => {
    setConn('live');
    // Events are not replayed: whatever happened while away comes from the lists.
    reload();
    reloadSessions();
  });
  const onCard = (event) => {
    try {
      const card = JSON.parse(event.data);
      upsert(card);
      if (card?.sessionId) sessionCardChanged(card.sessionId);
    } catch (err) {
      console.error('askrelay: bad event', err);
    }
  };
  source.addEventListener('card.created', onCard);
  source.addEventListener('card.updated', onCard);
  source.addEventListener('session.updated', (event) => {
    try {
      upsertSession(JSON.parse(event.data));
    } catch (err) {
      console.error('askrelay: bad event', err);
    }
  });
  source.addEventListener('error', () => {
    if (events !== source) return;
    if (source.readyState !== EventSource.CLOSED) {
      setConn('reconnecting');
      return;
    }
    // The browser gave up (e.g. a 401 or the relay is down): find out why, then retry.
    setConn('reconnecting');
    events = null;
    retryTimer = setTimeout(async () => {
      if (await reload()) connect();
      else if (signedIn) retryTimer = setTimeout(() => signedIn && connect(), RETRY_MS);
    }, RETRY_MS);
  });
}

/** Loads the pending list and settles cards that closed while we were not listening. */
async function reload() {
  let list;
  try {
    // Every pending card, up to the API's ceiling (its default page is 500).
    list = (await api('/api/cards?status=pending&limit=10000')).cards;
  } catch (err) {
    if (!(err instanceof Unauthorized)) setConn('offline');
    return false;
  }
  const ids = new Set(list.map((c) => c.id));
  for (const card of list) upsert(card);
  const gone = [...shown.values()].filter((s) => s.card.status === 'pending' && !ids.has(s.card.id));
  await Promise.all(
    gone.map(async (s) => {
      try {
        upsert(await api(`/api/cards/${encodeURIComponent(s.card.id)}`));
      } catch {
        /* leave it; the next reload tries again */
      }
    }),
  );
  return true;
}

// ---------------------------------------------------------------- cards

function upsert(card) {
  if (!card || typeof card.id !== 'string') return;
  const known = shown.get(card.id);
  if (!known) {
    if (card.status !== 'pending') return; // closed before we ever saw it
    const entry = { card, el: null, ui: newUi(card) };
    entry.el = renderCard(entry);
    shown.set(card.id, entry);
    insertPending(entry);
    refreshBoard();
    if (awaitedCard === card.id) {
      awaitedCard = null;
      revealCard(card.id, { navigate: false });
    }
    return;
  }
  if (known.card.status !== 'pending') return; // closed is final
  known.card = card;
  if (card.status !== 'pending') closeCard(known);
}

function newUi(card) {
  const drafts = {};
  for (const q of card.questions) drafts[q.id] = { selected: new Set(), text: '', several: false, done: false };
  return { step: 0, drafts, busy: false, countdown: null, probed: false };
}

function insertPending(entry) {
  const after = [...els.pending.children].find((el) => {
    const other = shown.get(el.dataset.cardId);
    return other && other.card.createdAt > entry.card.createdAt;
  });
  els.pending.insertBefore(entry.el, after ?? null);
}

function pendingEntries() {
  return [...els.pending.children].map((el) => shown.get(el.dataset.cardId)).filter((s) => s && s.card.status === 'pending');
}

function refreshBoard() {
  const n = pendingEntries().length;
  setText(els.count, String(n));
  setText(els.tabCardsCount, n > 0 ? String(n) : '');
  els.empty.hidden = n > 0;
  document.title = n > 0 ? `(${n}) askrelay` : 'askrelay';
  els.recent.hidden = els.recentList.children.length === 0;
  markKeyboardTarget();
}

function renderCard(entry) {
  const { card } = entry;
  const titleId = nextId('card-title');
  const chips = h('div', { class: 'chips' },
    h('span', { class: 'chip chip-provider', title: card.provider ? providerTitle(card.provider, card.engine) : undefined, dataset: { testid: 'provider' } }, providerLabel(card.provider, card.engine)),
    card.kind === 'approval' ? h('span', { class: 'chip chip-approval' }, 'Approval') : null,
    card.sessionId
      ? h('a', {
          class: 'chip chip-session',
          href: `#sessions/${encodeURIComponent(card.sessionId)}`,
          title: `Asked by session ${card.sessionId}: open its transcript`,
          dataset: { testid: 'card-session', sessionId: card.sessionId },
        }, `session ${shortId(card.sessionId)}`)
      : null,
  );
  const countdown = h('span', { class: 'countdown', dataset: { testid: 'countdown' }, title: `Asked ${fmtTime(card.createdAt)} · closes ${fmtTime(card.expiresAt)}` });
  entry.ui.countdown = countdown;
  const body = h('div', { class: 'card-body' });
  const error = h('p', { class: 'error card-error', dataset: { testid: 'card-error' }, role: 'alert', hidden: true });
  const status = h('p', { class: 'card-status', dataset: { testid: 'card-status' }, role: 'status', hidden: true });
  const skip = h('button', { type: 'button', class: 'ghost skip', dataset: { testid: 'skip' }, onclick: () => skipCard(entry) }, 'Skip');
  const stepper = h('div', { class: 'stepper', dataset: { testid: 'stepper' }, hidden: true });
  const back = h('button', { type: 'button', class: 'ghost back', dataset: { testid: 'back' }, hidden: true, onclick: () => goToStep(entry, entry.ui.step - 1) }, '← Back');

  const el = h('article', {
    class: `card${card.kind === 'approval' ? ' card-approval' : ''}`,
    tabindex: '-1',
    'aria-labelledby': titleId,
    dataset: { testid: 'card', cardId: card.id, status: card.status, layout: card.layout },
  },
    h('div', { class: 'card-head' }, chips, countdown),
    // Without a title the heading shows only in the compact Recent list (the question says it all).
    h('h3', { class: `card-title${card.title ? '' : ' untitled'}`, id: titleId }, card.title || card.questions[0]?.text || 'Question'),
    body,
    error,
    status,
    h('div', { class: 'card-foot' }, h('div', { class: 'foot-left' }, back, stepper), skip),
  );
  entry.parts = { body, error, status, skip, stepper, back, chips, agentBadge: null };
  tickCountdown(entry, Date.now());
  if (card.layout === 'form') renderForm(entry);
  else renderStep(entry);
  return el;
}

// ---------------------------------------------------------------- steps layout

function renderStep(entry) {
  const { card, ui, parts } = entry;
  const n = card.questions.length;
  const q = card.questions[ui.step];
  const draft = ui.drafts[q.id];
  const multi = q.multiSelect || draft.several;
  const last = ui.step === n - 1;
  const textId = nextId('q');

  const options = q.options.map((option, i) => {
    const picked = draft.selected.has(option.label);
    return h('button', {
      type: 'button',
      class: `option${multi ? ' multi' : ''}${picked ? ' picked' : ''}`,
      dataset: { testid: 'option', label: option.label },
      'aria-pressed': multi ? String(picked) : undefined,
      onclick: () => pick(entry, i),
    },
      h('span', { class: 'key', 'aria-hidden': 'true' }, i < 9 ? String(i + 1) : ''),
      h('span', { class: 'option-main' },
        h('span', { class: 'option-label' }, option.label),
        option.description ? h('span', { class: 'option-desc' }, option.description) : null,
      ),
      multi ? h('span', { class: 'check', 'aria-hidden': 'true' }) : null,
    );
  });

  const toggle =
    card.selectSeveral && !q.multiSelect && q.options.length >= 2
      ? h('label', { class: 'toggle' },
          h('input', {
            type: 'checkbox',
            role: 'switch',
            checked: draft.several,
            dataset: { testid: 'select-several' },
            onchange: (e) => {
              draft.several = e.target.checked;
              if (!draft.several && draft.selected.size > 1) draft.selected.clear();
              renderStep(entry);
              $('[data-testid="select-several"]', entry.el)?.focus();
            },
          }),
          h('span', { class: 'toggle-track', 'aria-hidden': 'true' }),
          'Select several',
        )
      : null;

  let text = null;
  if (q.freeText) {
    text = h('textarea', {
      class: 'free-text',
      rows: '1',
      dataset: { testid: 'free-text' },
      'aria-label': q.options.length ? 'Your own answer' : 'Your answer',
      placeholder: q.options.length ? (multi ? 'Anything to add? (optional)' : 'Or type your own answer…') : 'Type your answer…',
      maxlength: '20000',
      value: draft.text,
      oninput: (e) => {
        draft.text = e.target.value;
        autosize(e.target);
      },
      onkeydown: (e) => {
        if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
          e.preventDefault();
          reply(entry);
        }
      },
    });
  }
  const replyLabel = !last ? 'Next' : multi ? 'Reply with selection' : 'Send';
  const replyButton = multi || q.freeText
    ? h('button', {
        type: 'button',
        // With options to click, a typed reply is the side road: a quieter button.
        class: `${multi || !q.options.length ? 'primary' : 'secondary'} reply`,
        dataset: { testid: 'reply' },
        onclick: () => reply(entry),
      }, replyLabel)
    : null;

  const question = h('div', { class: 'question', dataset: { testid: 'question', questionId: q.id } },
    q.header ? h('span', { class: 'chip chip-header', dataset: { testid: 'question-header' } }, q.header) : null,
    questionText(card, q.text, textId),
    multi ? h('p', { class: 'muted small hint-line' }, 'Check every option that applies.') : null,
    toggle,
    options.length ? h('div', { class: 'options', role: 'group', 'aria-labelledby': textId }, options) : null,
    text || replyButton ? h('div', { class: `reply-row${text ? '' : ' solo'}` }, text, replyButton) : null,
  );
  parts.body.replaceChildren(question);
  if (text) requestAnimationFrame(() => autosize(text));

  parts.back.hidden = ui.step === 0;
  parts.stepper.hidden = n < 2;
  if (n > 1) {
    parts.stepper.setAttribute('aria-label', `Question ${ui.step + 1} of ${n}`);
    parts.stepper.replaceChildren(
      h('span', { class: 'dots', 'aria-hidden': 'true' },
        card.questions.map((qq, i) => h('span', { class: `dot${i < ui.step ? ' done' : ''}${i === ui.step ? ' current' : ''}` }))),
      h('span', { class: 'step-count' }, `${ui.step + 1} / ${n}`),
    );
  }
}

/**
 * An approval's text is what would run or change: a command, a diff, a plan. Its first
 * paragraph ("Run this command?") stays prose; the rest goes in a monospace block that
 * keeps every line and space as sent.
 */
function questionText(card, text, id) {
  const verbatim =
    card.kind === 'approval' &&
    (String(card.tool ?? '').startsWith('permission:') || card.tool === 'ExitPlanMode' || text.trim().includes('\n'));
  if (!verbatim) return h('p', { class: 'question-text', id }, text);
  const trimmed = text.replace(/^\s*\n|\s+$/g, '');
  const cut = trimmed.indexOf('\n\n');
  const lead = cut > 0 && !trimmed.slice(0, cut).includes('\n') ? trimmed.slice(0, cut) : '';
  const code = lead ? trimmed.slice(cut).replace(/^\n+/, '') : trimmed;
  return h('div', { class: 'question-text approval-text', id },
    lead ? h('p', { class: 'approval-lead' }, lead) : null,
    code ? h('pre', { class: 'approval-code', tabindex: '0', dataset: { testid: 'approval-code' } }, code) : null,
  );
}

function autosize(textarea) {
  textarea.style.height = 'auto';
  textarea.style.height = `${Math.min(textarea.scrollHeight + 2, 240)}px`;
}

function currentQuestion(entry) {
  return entry.card.questions[entry.ui.step];
}

function pick(entry, index) {
  const { card, ui } = entry;
  if (card.status !== 'pending' || ui.busy) return;
  const q = currentQuestion(entry);
  const option = q.options[index];
  if (!option) return;
  const draft = ui.drafts[q.id];
  clearError(entry);
  if (q.multiSelect || draft.several) {
    if (draft.selected.has(option.label)) draft.selected.delete(option.label);
    else draft.selected.add(option.label);
    const button = entry.parts.body.querySelectorAll('[data-testid="option"]')[index];
    const picked = draft.selected.has(option.label);
    button.classList.toggle('picked', picked);
    button.setAttribute('aria-pressed', String(picked));
    return;
  }
  draft.selected = new Set([option.label]);
  draft.done = true;
  advance(entry);
}

function reply(entry) {
  const { card, ui } = entry;
  if (card.status !== 'pending' || ui.busy) return;
  const q = currentQuestion(entry);
  const draft = ui.drafts[q.id];
  const multi = q.multiSelect || draft.several;
  if (!multi) draft.selected.clear(); // a typed reply to a single-choice question is the answer
  if (draft.selected.size === 0 && !draft.text.trim()) {
    showError(entry, multi ? 'Check at least one option, or type an answer.' : 'Type an answer first, or pick an option.');
    return;
  }
  draft.done = true;
  advance(entry);
}

function advance(entry) {
  const { card, ui } = entry;
  if (ui.step < card.questions.length - 1) {
    const hadFocus = entry.el.contains(document.activeElement);
    goToStep(entry, ui.step + 1);
    if (hadFocus) focusFirst(entry);
    return;
  }
  const answers = {};
  for (const q of card.questions) {
    const d = ui.drafts[q.id];
    const text = q.freeText ? d.text.trim() : '';
    answers[q.id] = text ? { selected: [...d.selected], text } : { selected: [...d.selected] };
  }
  submit(entry, answers);
}

function goToStep(entry, step) {
  if (step < 0 || step >= entry.card.questions.length) return;
  entry.ui.step = step;
  clearError(entry);
  renderStep(entry);
  markKeyboardTarget();
}

function focusFirst(entry) {
  const target = $('[data-testid="option"], [data-testid="free-text"]', entry.parts.body);
  (target ?? entry.el).focus({ preventScroll: true });
}

// ---------------------------------------------------------------- form layout

function renderForm(entry) {
  const { card, parts } = entry;
  const fields = card.questions.map((q) => renderField(q));
  const form = h('form', {
    class: 'form',
    dataset: { testid: 'form' },
    novalidate: true,
    onsubmit: (e) => {
      e.preventDefault();
      submitForm(entry);
    },
  },
    fields,
    h('div', { class: 'form-actions' }, h('button', { type: 'submit', class: 'primary', dataset: { testid: 'submit' } }, 'Submit')),
  );
  parts.body.replaceChildren(form);
}

function fieldType(q) {
  if (q.field?.type) return q.field.type;
  if (q.options.length === 0) return 'string';
  return q.multiSelect ? 'choices' : 'choice';
}

function renderField(q) {
  const type = fieldType(q);
  const id = nextId('field');
  const head = (labelFor) => [
    q.header ? h('span', { class: 'chip chip-header' }, q.header) : null,
    h(labelFor ? 'label' : 'span', { class: 'field-text', for: labelFor, id: `${id}-label` }, q.text),
  ];
  const wrap = (...children) =>
    h('div', { class: `form-field field-${type}`, dataset: { testid: 'field', questionId: q.id, type } }, children);

  if (type === 'string' || type === 'number') {
    return wrap(
      h('div', { class: 'field-head' }, head(id)),
      h('input', {
        id,
        type: type === 'number' ? 'number' : 'text',
        step: type === 'number' ? 'any' : undefined,
        inputmode: type === 'number' ? 'decimal' : undefined,
        class: 'text-input',
        name: q.id,
        autocomplete: 'off',
        dataset: { testid: 'field-input' },
      }),
    );
  }

  const many = type === 'choices';
  let control;
  if (!many && type !== 'boolean' && q.options.length > 6) {
    control = h('select', { id, class: 'select', name: q.id, dataset: { testid: 'field-input' }, 'aria-labelledby': `${id}-label` },
      h('option', { value: '' }, 'Choose…'),
      q.options.map((o) => h('option', { value: o.label }, o.description ? `${o.label} — ${o.description}` : o.label)),
    );
  } else {
    control = h('div', { class: `choices${type === 'boolean' ? ' segmented' : ''}`, role: many ? 'group' : 'radiogroup', 'aria-labelledby': `${id}-label` },
      q.options.map((o, i) =>
        h('label', { class: 'choice' },
          h('input', { type: many ? 'checkbox' : 'radio', name: `${id}-${q.id}`, value: o.label, dataset: { testid: 'field-option' } }),
          h('span', { class: 'choice-box', 'aria-hidden': 'true' }),
          h('span', { class: 'choice-main' },
            h('span', { class: 'option-label' }, o.label),
            o.description ? h('span', { class: 'option-desc' }, o.description) : null,
          ),
          type !== 'boolean' && i < 9 ? h('span', { class: 'key small-key', 'aria-hidden': 'true' }, String(i + 1)) : null,
        )),
    );
  }
  return wrap(
    h('div', { class: 'field-head' }, head(null)),
    control,
    q.freeText
      ? h('input', { type: 'text', class: 'text-input other', name: `${q.id}-text`, 'aria-label': `${q.text} (your own answer)`, placeholder: 'Or type your own answer…', dataset: { testid: 'field-text' } })
      : null,
  );
}

function readField(fieldEl, q) {
  const type = fieldType(q);
  if (type === 'string' || type === 'number') {
    const value = $('[data-testid="field-input"]', fieldEl).value.trim();
    return { selected: [], text: value };
  }
  const select = $('select', fieldEl);
  const selected = select
    ? select.value ? [select.value] : []
    : [...fieldEl.querySelectorAll('input[data-testid="field-option"]:checked')].map((i) => i.value);
  const other = $('[data-testid="field-text"]', fieldEl)?.value.trim() ?? '';
  return { selected, text: other };
}

function submitForm(entry) {
  const { card, ui } = entry;
  if (card.status !== 'pending' || ui.busy) return;
  clearError(entry);
  const answers = {};
  for (const q of card.questions) {
    const fieldEl = $(`[data-testid="field"][data-question-id="${CSS.escape(q.id)}"]`, entry.el);
    const { selected, text } = readField(fieldEl, q);
    fieldEl.classList.remove('invalid');
    if (selected.length === 0 && !text) {
      fieldEl.classList.add('invalid');
      showError(entry, `Answer “${q.header || q.text}” first.`);
      $('input, select', fieldEl)?.focus();
      return;
    }
    if (fieldType(q) === 'number' && !Number.isFinite(Number(text))) {
      fieldEl.classList.add('invalid');
      showError(entry, `“${q.header || q.text}” takes a number.`);
      $('input', fieldEl)?.focus();
      return;
    }
    answers[q.id] = text ? { selected, text } : { selected };
  }
  submit(entry, answers);
}

// ---------------------------------------------------------------- answer, skip, close

async function submit(entry, answers) {
  setBusy(entry, true);
  try {
    const card = await api(`/api/cards/${encodeURIComponent(entry.card.id)}/answer`, { method: 'POST', json: { answers } });
    upsert(card);
  } catch (err) {
    failed(entry, err);
  } finally {
    setBusy(entry, false);
  }
}

async function skipCard(entry) {
  if (entry.card.status !== 'pending' || entry.ui.busy) return;
  setBusy(entry, true);
  try {
    upsert(await api(`/api/cards/${encodeURIComponent(entry.card.id)}/skip`, { method: 'POST' }));
  } catch (err) {
    failed(entry, err);
  } finally {
    setBusy(entry, false);
  }
}

function failed(entry, err) {
  if (err instanceof Unauthorized) return;
  if (err.card) upsert(err.card); // 409 / 410 carry the card as it now stands
  let message = err.message;
  if (err.code === 'already_answered') message = `Someone else answered first. ${message}`;
  showError(entry, message);
  // Point a steps card back at the question the relay complained about.
  const named = /question "([^"]+)"/.exec(err.message ?? '')?.[1];
  if (entry.card.status === 'pending' && entry.card.layout !== 'form' && named) {
    const step = entry.card.questions.findIndex((q) => q.id === named);
    if (step >= 0 && step !== entry.ui.step) {
      goToStep(entry, step);
      showError(entry, message);
    }
  }
}

function setBusy(entry, busy) {
  entry.ui.busy = busy;
  entry.el.classList.toggle('busy', busy);
  entry.el.setAttribute('aria-busy', String(busy));
  if (entry.card.status === 'pending') setDisabled(entry.el, busy);
}

function setDisabled(root, disabled) {
  for (const el of root.querySelectorAll('button, input, textarea, select')) el.disabled = disabled;
}

function showError(entry, message) {
  setText(entry.parts.error, message);
  entry.parts.error.hidden = false;
}

function clearError(entry) {
  entry.parts.error.hidden = true;
  setText(entry.parts.error, '');
}

function closeCard(entry, { settle = true } = {}) {
  const { card, el, parts } = entry;
  el.dataset.status = card.status;
  el.classList.add('closed');
  setDisabled(el, true);
  parts.back.hidden = true;
  entry.ui.countdown.hidden = true;
  setText(parts.status, describeClosed(card));
  parts.status.hidden = false;
  showAnsweredBy(entry);
  if (card.status === 'answered') markChosen(entry);
  if (activeId === card.id) activeId = null;
  refreshBoard();
  if (settle) setTimeout(() => moveToRecent(entry), RECENT_AFTER_MS);
}

function markChosen(entry) {
  const answer = entry.card.answer ?? {};
  for (const button of entry.el.querySelectorAll('[data-testid="option"]')) {
    const qid = button.closest('[data-question-id]')?.dataset.questionId;
    button.classList.toggle('chosen', Boolean(answer[qid]?.selected.includes(button.dataset.label)));
  }
}

function moveToRecent(entry) {
  if (!entry.el.isConnected || entry.el.parentElement === els.recentList) return;
  const hadFocus = entry.el.contains(document.activeElement);
  els.recentList.prepend(entry.el);
  entry.el.classList.add('compact');
  while (els.recentList.children.length > RECENT_MAX) {
    const last = els.recentList.lastElementChild;
    shown.delete(last.dataset.cardId);
    last.remove();
  }
  refreshBoard();
  if (hadFocus) pendingEntries()[0]?.el.focus({ preventScroll: true });
}

const STATUS_WORD = { answered: 'Answered', skipped: 'Skipped', expired: 'Expired', cancelled: 'Cancelled' };

function describeClosed(card) {
  const word = STATUS_WORD[card.status] ?? card.status;
  if (card.status === 'answered') return `${word}: ${describeAnswer(card)}`;
  if (card.status === 'expired') return `${word}: nobody answered in time`;
  if (card.status === 'cancelled') return `${word}: the session stopped`;
  return word;
}

/**
 * An answer (or skip) not given by you here: a badge next to the card's chips. Another
 * agent's names the agent and the surface it used ("answered by agent s_3dfac9
 * (relay-tool)") and leads to its session; a person's in a chat channel names the channel
 * and the user there ("answered in telegram (42)"). Your own answers get none.
 */
function showAnsweredBy(entry) {
  const { card, el, parts } = entry;
  const closed = card.status === 'answered' || card.status === 'skipped';
  const by = closed ? card.answeredBy : undefined;
  el.dataset.answeredBy = by ? by.kind : '';
  parts.agentBadge?.remove();
  parts.agentBadge = null;
  if (!by || (by.kind === 'human' && by.id === 'operator')) return;
  const verb = card.status === 'skipped' ? 'skipped' : 'answered';
  if (by.kind === 'human') {
    const who = String(by.id).slice(String(by.id).indexOf(':') + 1);
    parts.agentBadge = h('span', { class: 'chip chip-channel', title: `${capitalize(verb)} in ${by.surface} by user ${who}`, dataset: { testid: 'answered-in-channel', surface: by.surface, user: who } }, `${verb} in ${by.surface} (${who})`);
    parts.chips.append(parts.agentBadge);
    return;
  }
  const isSession = /^s_/.test(String(by.id));
  const label = `${verb} by agent ${isSession ? shortId(by.id) : by.id} (${by.surface})`;
  const title = `${capitalize(verb)} by ${isSession ? `the agent of session ${by.id}` : `the agent “${by.id}”`}, through ${by.surface}, not by you`;
  parts.agentBadge = isSession
    ? h('a', { class: 'chip chip-agent', href: `#sessions/${encodeURIComponent(by.id)}`, title: `${title}: open its transcript`, dataset: { testid: 'answered-by-agent', agentId: by.id, surface: by.surface } }, label)
    : h('span', { class: 'chip chip-agent', title, dataset: { testid: 'answered-by-agent', agentId: by.id, surface: by.surface } }, label);
  parts.chips.append(parts.agentBadge);
}

function describeAnswer(card) {
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

// ---------------------------------------------------------------- countdown

function fmtLeft(ms) {
  if (ms <= 0) return 'Expiring…';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s left`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s left`;
  const hours = Math.floor(m / 60);
  if (hours < 48) return `${hours}h ${m % 60}m left`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h left`;
}

function fmtTime(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
}

function tickCountdown(entry, now) {
  const left = Date.parse(entry.card.expiresAt) - now;
  const el = entry.ui.countdown;
  setText(el, fmtLeft(left));
  el.classList.toggle('soon', left < 60_000);
  // The relay's own timer closes the card and tells us; asking once also makes it look.
  if (left <= -500 && !entry.ui.probed) {
    entry.ui.probed = true;
    api(`/api/cards/${encodeURIComponent(entry.card.id)}`).then(upsert, () => {});
  }
}

setInterval(() => {
  const now = Date.now();
  for (const entry of shown.values()) if (entry.card.status === 'pending') tickCountdown(entry, now);
}, 1000);

// ---------------------------------------------------------------- keyboard

function keyboardTarget() {
  const active = activeId && shown.get(activeId);
  if (active && active.card.status === 'pending' && active.el.parentElement === els.pending) return active;
  return pendingEntries()[0];
}

function markKeyboardTarget() {
  const target = keyboardTarget();
  const several = pendingEntries().length > 1;
  for (const { el } of shown.values()) el.classList.toggle('kbd-target', several && el === target?.el);
}

function activate(event) {
  const el = event.target.closest?.('[data-testid="card"]');
  if (!el || !shown.has(el.dataset.cardId)) return;
  if (activeId !== el.dataset.cardId) {
    activeId = el.dataset.cardId;
    markKeyboardTarget();
  }
}
document.addEventListener('focusin', activate);
document.addEventListener('pointerdown', activate);

document.addEventListener('keydown', (event) => {
  if (!signedIn || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
  if (!/^[1-9]$/.test(event.key) || els.board.hidden) return;
  const t = event.target;
  const typing = t instanceof HTMLElement && (t.isContentEditable || t.matches('textarea, select, input:not([type=checkbox]):not([type=radio])'));
  if (typing) return;
  const entry = keyboardTarget();
  if (!entry || entry.ui.busy) return;
  const index = Number(event.key) - 1;
  event.preventDefault();
  if (entry.card.layout === 'form') pickInForm(entry, index, t);
  else pick(entry, index);
});

function pickInForm(entry, index, focused) {
  const fields = [...entry.el.querySelectorAll('[data-testid="field"]')];
  const within = focused instanceof Element ? focused.closest('[data-testid="field"]') : null;
  const field = (within && fields.includes(within) ? within : null) ?? fields.find((f) => f.querySelector('[data-testid="field-option"], select'));
  if (!field) return;
  const select = $('select', field);
  if (select) {
    if (index + 1 < select.options.length) select.selectedIndex = index + 1;
    return;
  }
  const input = field.querySelectorAll('[data-testid="field-option"]')[index];
  if (!input) return;
  input.checked = input.type === 'checkbox' ? !input.checked : true;
  input.focus({ preventScroll: true });
}

// ---------------------------------------------------------------- views

let lastRoute = null;

/** #cards (the default), #sessions, #sessions/<id>. */
function route() {
  if (!signedIn) return;
  let hash = location.hash.slice(1);
  try {
    hash = decodeURIComponent(hash);
  } catch {
    /* a malformed escape: use it as it is */
  }
  const view = hash === 'sessions' || hash.startsWith('sessions/') ? 'sessions' : 'cards';
  // #card=<id>: the link a notification opens. The Cards view, scrolled to that card.
  const linkedCard = hash.startsWith('card=') ? hash.slice('card='.length) : null;
  const sessionId = view === 'sessions' ? hash.slice('sessions/'.length) || null : null;
  els.board.hidden = view !== 'cards';
  els.sessions.hidden = view !== 'sessions';
  for (const tab of els.tabs.querySelectorAll('.tab')) {
    const current = tab.dataset.view === view;
    tab.classList.toggle('current', current);
    if (current) tab.setAttribute('aria-current', 'page');
    else tab.removeAttribute('aria-current');
  }
  if (sessionId) openSessionView(sessionId);
  else closeSessionView();
  const key = `${view}/${sessionId ?? ''}`;
  if (lastRoute !== null && key !== lastRoute) window.scrollTo(0, 0);
  lastRoute = key;
  markKeyboardTarget();
  awaitedCard = null;
  for (const { el } of shown.values()) if (el.dataset.cardId !== linkedCard) el.classList.remove('linked');
  if (linkedCard) revealCard(linkedCard, { navigate: false });
}
window.addEventListener('hashchange', route);
window.addEventListener('popstate', route);

/** Goes somewhere on the page now (a hash link would get there one task later). */
function navigate(hash) {
  if (location.hash !== hash) history.pushState(null, '', hash);
  route();
}

/** A card named by #card=<id> that the relay does not know (yet): shown when it arrives. */
let awaitedCard = null;

/**
 * Shows a card on the Cards view, fetching it when the page never saw it (e.g. closed long
 * ago). `navigate: false` keeps the address as it is (#card=<id>, the deep link).
 */
async function revealCard(id, { navigate: go = true } = {}) {
  let entry = shown.get(id);
  if (!entry) {
    if (!go) awaitedCard = id;
    let card;
    try {
      card = await api(`/api/cards/${encodeURIComponent(id)}`);
    } catch {
      return; // unknown so far: upsert() reveals it if it turns up while the link is open
    }
    if (!go && awaitedCard !== id) return; // the address changed meanwhile
    awaitedCard = null;
    if (card.status === 'pending') upsert(card);
    else if (!shown.has(card.id)) showClosedCard(card);
    entry = shown.get(id);
    if (!entry) return;
  }
  if (go) navigate('#cards');
  else if (els.board.hidden) return; // the user went elsewhere meanwhile
  else entry.el.classList.add('linked'); // stays marked while the address names it
  entry.el.scrollIntoView({ block: 'center' });
  entry.el.focus({ preventScroll: true });
  entry.el.classList.remove('flash');
  void entry.el.offsetWidth; // restart the highlight
  entry.el.classList.add('flash');
}

function showClosedCard(card) {
  const entry = { card, el: null, ui: newUi(card) };
  entry.el = renderCard(entry);
  shown.set(card.id, entry);
  els.recentList.prepend(entry.el);
  entry.el.classList.add('compact');
  closeCard(entry, { settle: false });
}

// ---------------------------------------------------------------- sessions

const ACTIVE = new Set(['starting', 'running', 'waiting', 'idle', 'stuck']);
const PROVIDER_NAME = { claude: 'Claude', deepseek: 'DeepSeek', copilot: 'GitHub Copilot', openai: 'OpenAI', grok: 'Grok' };
/** Each provider's engines for POST /api/sessions, its default first. */
const CLAUDE_ENGINES = ['code', 'messages'];
const COPILOT_ENGINES = ['sdk', 'extension'];
const PROVIDER_ENGINES = { claude: CLAUDE_ENGINES, deepseek: CLAUDE_ENGINES, copilot: COPILOT_ENGINES, openai: COPILOT_ENGINES, grok: ['chat'] };
const ENGINE_NAME = {
  code: 'Claude Code',
  messages: 'the relay’s own Messages API loop',
  sdk: 'Copilot SDK; askrelay’s ask_user replaces the built-in one',
  extension: 'Copilot SDK; Copilot’s own ask_user passes through',
  chat: 'Chat Completions; no question tool, Grok asks in its reply',
};
const ASK_USER_VARIANT = {
  classic: 'One question with choices',
  form: 'Fields from a schema',
};
const capitalize = (text) => text.charAt(0).toUpperCase() + text.slice(1);
const SESSION_STATUS = {
  starting: ['Starting', 'The agent is starting.'],
  running: ['Working', 'The agent is working on its turn.'],
  waiting: ['Waiting on you', 'A card is open: answer it and the agent goes on.'],
  idle: ['Idle', 'The turn ended: the agent waits for your next message.'],
  stuck: ['Stuck?', 'No activity from the agent for a while.'],
  stopped: ['Stopped', 'The session was stopped.'],
  failed: ['Failed', 'The provider gave up.'],
};
const COMPOSER_WHY = {
  starting: 'The agent is starting. You can write once its turn ends.',
  running: 'The agent is working. You can write once its turn ends.',
  waiting: 'The agent is waiting on a card: answer it first.',
  stuck: 'The agent has shown no activity for a while. Wait, or stop the session.',
  stopped: 'The session is stopped: start a new one to go on.',
  failed: 'The session failed: start a new one to go on.',
};

/** @type {Map<string, any>} session records (no transcript), by id */
const sessions = new Map();
/** @type {Map<string, HTMLElement>} */
const sessionRows = new Map();
/** @type {Map<string, string>} each session's first prompt, its name on the page */
const sessionTitles = new Map();
const titleFetches = new Set();
/** @type {Map<string, string>} unsent messages, by session */
const messageDrafts = new Map();
/** @type {Map<string, boolean>} agentsMayAnswer changes on their way to the relay: the value asked for, by session */
const permissionBusy = new Map();
/** @type {Map<string, string>} why the last agentsMayAnswer change failed, by session */
const permissionErrors = new Map();
/** The session open on screen: {id, session, parts, count, loading, dirty, ...} */
let opened = null;

const shortId = (id) => String(id).slice(0, 8);
const providerName = (provider) => PROVIDER_NAME[provider] ?? provider ?? 'Agent';
/** `claude · messages`: the ids, as the API and the CLI spell them; the names in the tooltip. */
const providerLabel = (provider, engine) => (engine ? `${provider} · ${engine}` : provider ?? '');
const providerTitle = (provider, engine) =>
  engine ? `${providerName(provider)}, ${engine} engine` : providerName(provider);
const providerChip = (s) =>
  h('span', { class: 'chip chip-provider', title: providerTitle(s.provider, s.engine), dataset: { testid: 'session-provider' } }, providerLabel(s.provider, s.engine));

async function reloadSessions() {
  let list;
  try {
    list = (await api('/api/sessions')).sessions;
  } catch {
    return;
  }
  const ids = new Set(list.map((s) => s.id));
  for (const id of [...sessions.keys()]) {
    if (ids.has(id)) continue;
    sessions.delete(id);
    sessionRows.get(id)?.remove();
    sessionRows.delete(id);
  }
  for (const s of list) upsertSession(s);
  refreshSessionCounts();
}

function forgetSessions() {
  closeSessionView();
  sessions.clear();
  for (const row of sessionRows.values()) row.remove();
  sessionRows.clear();
  sessionTitles.clear();
  titleFetches.clear();
  messageDrafts.clear();
  refreshSessionCounts();
}

/** A session record from the list, an event or a fetch (which also carries the transcript). */
function upsertSession(s, { fromDetail = false } = {}) {
  if (!s || typeof s.id !== 'string') return;
  const { transcript, ...record } = s;
  const known = sessions.get(s.id);
  if (!known || !(known.updatedAt > record.updatedAt)) sessions.set(s.id, record); // never step back to an older copy
  if (transcript && !sessionTitles.has(s.id)) {
    const first = transcript.find((e) => e.role === 'user');
    if (first) sessionTitles.set(s.id, first.text);
  }
  renderSessionRow(sessions.get(s.id));
  refreshSessionCounts();
  if (opened?.id === s.id) {
    applySessionHead(opened, sessions.get(s.id));
    if (!fromDetail) refreshOpened(); // the event carries no transcript: fetch it
  } else if (!sessionTitles.has(s.id)) {
    fetchTitle(s.id);
  }
}

/** The list shows each session by its first prompt, which only the full record carries. */
async function fetchTitle(id) {
  if (titleFetches.has(id) || titleFetches.size >= 100) return;
  titleFetches.add(id);
  try {
    upsertSession(await api(`/api/sessions/${encodeURIComponent(id)}`), { fromDetail: true });
  } catch {
    /* it keeps its short id as a name */
  }
}

function sessionName(id) {
  const title = sessionTitles.get(id);
  return title ? title.trim().split('\n')[0] : `Session ${shortId(id)}`;
}

function refreshSessionCounts() {
  const all = [...sessions.values()];
  const active = all.filter((s) => ACTIVE.has(s.status)).length;
  const waiting = all.filter((s) => s.status === 'waiting').length;
  setText(els.sessionCount, String(all.length));
  setText(els.tabSessionsCount, active ? String(active) : '');
  els.tabSessionsCount.classList.toggle('attention', waiting > 0);
  els.tabSessionsCount.title = active ? `${active} active${waiting ? `, ${waiting} waiting on you` : ''}` : '';
  els.sessionsEmpty.hidden = all.length > 0;
}

function statusBadge(s) {
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
  const old = sessionRows.get(s.id);
  sessionRows.set(s.id, row);
  if (old) {
    const focused = old.contains(document.activeElement) ? document.activeElement : null;
    old.replaceWith(row);
    if (focused?.classList.contains('session-link')) link.focus({ preventScroll: true });
    else if (focused?.dataset.testid === 'agents-may-answer') $('[data-testid="agents-may-answer"]', row)?.focus({ preventScroll: true });
    return;
  }
  // Newest first.
  const after = [...els.sessionList.children].find((el) => (sessions.get(el.dataset.sessionId)?.createdAt ?? '') < s.createdAt);
  els.sessionList.insertBefore(row, after ?? null);
}

/**
 * The session's "Other agents may answer its questions" switch (PATCH agentsMayAnswer).
 * Live sessions only: a stopped or failed one shows its last setting, greyed.
 */
function agentsSwitch(s) {
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
function syncAgentsSwitch(label, s) {
  const input = label.querySelector('input');
  const ended = !ACTIVE.has(s.status);
  const busy = permissionBusy.has(s.id);
  // While a change is on its way, a re-render shows the value asked for.
  input.checked = busy ? permissionBusy.get(s.id) : Boolean(s.agentsMayAnswer);
  input.disabled = ended;
  if (busy) input.setAttribute('aria-busy', 'true');
  else input.removeAttribute('aria-busy');
  label.classList.toggle('ended', ended);
  label.title = ended
    ? 'The session has ended'
    : 'Another session’s agent may answer this session’s questions (approvals stay yours alone)';
}

function permissionErrorLine(id) {
  const message = permissionErrors.get(id);
  return message ? h('p', { class: 'session-error', role: 'alert', dataset: { testid: 'agents-may-answer-error' } }, message) : null;
}

async function setAgentsMayAnswer(id, allowed, input) {
  // One change at a time; the switch is not disabled meanwhile, so it keeps the focus.
  if (permissionBusy.has(id)) {
    input.checked = !allowed;
    return;
  }
  permissionBusy.set(id, allowed);
  permissionErrors.delete(id);
  input.setAttribute('aria-busy', 'true');
  let updated = null;
  let failure = null;
  try {
    updated = await api(`/api/sessions/${encodeURIComponent(id)}`, { method: 'PATCH', json: { agentsMayAnswer: allowed } });
  } catch (err) {
    failure = err;
  }
  permissionBusy.delete(id);
  input.removeAttribute('aria-busy');
  if (updated) {
    upsertSession(updated);
    return;
  }
  if (!(failure instanceof Unauthorized)) permissionErrors.set(id, `Could not change who may answer: ${failure.message}`);
  // Back to the setting the relay has, with the error under it.
  const known = sessions.get(id);
  if (known) upsertSession({ ...known });
}

function pendingCardOf(sessionId) {
  return pendingEntries().find((e) => e.card.sessionId === sessionId)?.card;
}

async function goToSessionCard(sessionId) {
  let card = pendingCardOf(sessionId);
  if (!card) {
    try {
      card = (await api(`/api/cards?sessionId=${encodeURIComponent(sessionId)}&status=pending`)).cards[0];
    } catch {
      return;
    }
  }
  if (card) revealCard(card.id);
  else navigate('#cards');
}

/** A card of this session opened or closed: its waiting banner names the question. */
function sessionCardChanged(sessionId) {
  if (opened?.id === sessionId && opened.session) applySessionHead(opened, opened.session);
}

// ---------------------------------------------------------------- one session

function openSessionView(id) {
  els.sessionIndex.hidden = true;
  els.sessionDetail.hidden = false;
  if (opened?.id === id) return;
  saveDraft();
  opened = buildSessionView(id);
  els.sessionDetail.replaceChildren(opened.root);
  const known = sessions.get(id);
  if (known) applySessionHead(opened, known);
  refreshOpened();
}

function closeSessionView() {
  saveDraft();
  opened = null;
  els.sessionDetail.replaceChildren();
  els.sessionDetail.hidden = true;
  els.sessionIndex.hidden = false;
}

function saveDraft() {
  if (!opened) return;
  const text = opened.parts.input.value;
  if (text.trim()) messageDrafts.set(opened.id, text);
  else messageDrafts.delete(opened.id);
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
    value: messageDrafts.get(id) ?? '',
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

function applySessionHead(o, s) {
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
  if (s.status === 'waiting') {
    const card = pendingCardOf(s.id);
    const question = card ? card.title || card.questions[0]?.text : null;
    banner.replaceChildren(
      h('div', { class: 'banner-text' },
        h('strong', {}, 'Waiting on you'),
        question ? h('span', { class: 'banner-question' }, question) : null,
      ),
      h('button', { type: 'button', class: 'primary', dataset: { testid: 'answer-card' }, onclick: () => goToSessionCard(s.id) }, 'Answer the card →'),
    );
  } else if (s.status === 'stuck') {
    banner.replaceChildren(h('div', { class: 'banner-text' },
      h('strong', {}, 'No activity for a while'),
      h('span', {}, 'The agent may be stuck. Wait a little longer, or stop the session.')));
  } else if (s.status === 'failed') {
    banner.replaceChildren(h('div', { class: 'banner-text' },
      h('strong', {}, 'The session failed'),
      h('span', { title: s.error, dataset: { testid: 'session-error' } }, s.error || 'The provider gave up.')));
  } else if (s.status === 'stopped') {
    banner.replaceChildren(h('div', { class: 'banner-text' }, h('strong', {}, 'Stopped'), h('span', {}, 'The agent ended; cards it left open were cancelled.')));
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

async function refreshOpened() {
  const o = opened;
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
        if (opened === o && err.status === 404) {
          setText(o.parts.missing, `There is no session “${o.id}”.`);
          o.parts.missing.hidden = false;
        }
        return;
      }
      if (opened !== o) return;
      upsertSession(s, { fromDetail: true });
      appendTranscript(o, s.transcript ?? []);
    } while (o.dirty && opened === o);
  } finally {
    o.loading = false;
  }
}

function appendTranscript(o, list) {
  const list_ = o.parts.transcript;
  if (list.length < o.count) {
    list_.replaceChildren();
    o.count = 0;
  }
  const root = document.documentElement;
  const nearBottom = window.innerHeight + window.scrollY >= root.scrollHeight - 160;
  const fresh = list.slice(o.count);
  for (const entry of fresh) list_.append(renderEntry(o, entry));
  o.count = list.length;
  if (fresh.length && (o.first || nearBottom)) window.scrollTo(0, root.scrollHeight);
  o.first = false;
}

const ENTRY_WHO = { user: 'You', tool: 'Tool result', system: 'Relay' };

function renderEntry(o, e) {
  const who = e.role === 'assistant' ? providerName(o.session?.provider) : ENTRY_WHO[e.role] ?? e.role;
  return h('li', { class: `entry entry-${e.role}`, dataset: { testid: 'entry', role: e.role, cardId: e.cardId } },
    h('div', { class: 'entry-head' },
      h('span', { class: 'entry-who' }, who),
      h('time', { class: 'entry-time', datetime: e.at, title: fmtTime(e.at) }, fmtClock(e.at)),
      e.cardId
        ? h('a', {
            class: 'entry-card',
            href: '#cards',
            dataset: { testid: 'entry-card' },
            onclick: (ev) => {
              ev.preventDefault();
              revealCard(e.cardId);
            },
          }, 'Show the card')
        : null,
    ),
    h('div', { class: 'entry-text' }, e.text),
  );
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
    messageDrafts.delete(o.id);
    o.refocus = true;
    o.busy = false;
    upsertSession(s);
  } catch (err) {
    if (!(err instanceof Unauthorized)) {
      setText(o.parts.error, err.message);
      o.parts.error.hidden = false;
    }
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
    if (!(err instanceof Unauthorized)) {
      setText(o.parts.error, err.message);
      o.parts.error.hidden = false;
    }
  } finally {
    o.parts.stop.disabled = false;
  }
}

// ---------------------------------------------------------------- new session

/** The engine select follows the provider: its engines, its default first. */
function syncEngines({ keep = true } = {}) {
  const f = els.newSessionForm.elements;
  const engines = PROVIDER_ENGINES[f.provider.value] ?? CLAUDE_ENGINES;
  const current = f.engine.value;
  const same = f.engine.options.length === engines.length && engines.every((value, i) => f.engine.options[i].value === value);
  if (!same) {
    f.engine.replaceChildren(...engines.map((value) => h('option', { value }, value)));
    // The default (first) engine is the one reset() goes back to.
    f.engine.options[0].defaultSelected = true;
    f.engine.value = keep && engines.includes(current) ? current : engines[0];
  }
  syncEngineHints();
}

/** Each select says what its choice means; the ask_user variant shows for the extension engine only. */
function syncEngineHints() {
  const f = els.newSessionForm.elements;
  setText($('#session-engine-hint'), capitalize(ENGINE_NAME[f.engine.value] ?? ''));
  setText($('#session-ask-user-hint'), ASK_USER_VARIANT[f.askUserVariant.value] ?? '');
  $('[data-testid="session-ask-user-row"]').hidden = f.engine.value !== 'extension';
}

function resetNewSession() {
  els.newSessionForm.reset();
  syncEngines({ keep: false });
}

function toggleNewSession(open) {
  els.newSessionForm.hidden = !open;
  els.newSessionError.hidden = true; // a refusal belongs to the attempt it answered
  els.newSession.setAttribute('aria-expanded', String(open));
  els.newSession.hidden = open;
  if (open) els.newSessionForm.elements.prompt.focus();
  else els.newSession.focus({ preventScroll: true });
}

els.newSessionForm.elements.provider.addEventListener('change', () => syncEngines());
els.newSessionForm.elements.engine.addEventListener('change', syncEngineHints);
els.newSessionForm.elements.askUserVariant.addEventListener('change', syncEngineHints);
syncEngines({ keep: false });
els.newSession.addEventListener('click', () => toggleNewSession(true));
els.newSessionCancel.addEventListener('click', () => toggleNewSession(false));
els.newSessionForm.elements.prompt.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) {
    e.preventDefault();
    els.newSessionForm.requestSubmit();
  }
});

els.newSessionForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const f = els.newSessionForm.elements;
  const prompt = f.prompt.value;
  if (!prompt.trim()) {
    showNewSessionError('Write the prompt first: it is the agent’s first message.');
    f.prompt.focus();
    return;
  }
  const body = {
    provider: f.provider.value,
    engine: f.engine.value,
    prompt,
    relayMode: f.relayMode.value,
    agentsMayAnswer: f.agentsMayAnswer.checked,
  };
  if (body.engine === 'extension') body.askUserVariant = f.askUserVariant.value;
  const model = f.model.value.trim();
  if (model) body.model = model;
  els.startSession.disabled = true;
  setText(els.startSession, 'Starting…');
  els.newSessionError.hidden = true;
  try {
    const s = await api('/api/sessions', { method: 'POST', json: body });
    sessionTitles.set(s.id, prompt);
    upsertSession(s, { fromDetail: true });
    resetNewSession();
    toggleNewSession(false);
    navigate(`#sessions/${encodeURIComponent(s.id)}`);
  } catch (err) {
    if (!(err instanceof Unauthorized)) showNewSessionError(err.message);
  } finally {
    els.startSession.disabled = false;
    setText(els.startSession, 'Start session');
  }
});

function showNewSessionError(message) {
  setText(els.newSessionError, message);
  els.newSessionError.hidden = false;
}

function fmtStarted(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toDateString() === new Date().toDateString() ? fmtClock(iso) : fmtTime(iso);
}

function fmtClock(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString([], { hour: 'numeric', minute: '2-digit' });
}

// ---------------------------------------------------------------- notifications (Web Push)

// The service worker (/sw.js) shows a notification for each new card and closes it when
// the card is answered elsewhere, expires or is cancelled; a click brings this page to
// #card=<id>. The button subscribes this browser with the relay's VAPID key
// (GET /api/push/key) and hands the subscription to the relay (POST /api/push/subscriptions);
// Disable undoes both (DELETE /api/push/subscriptions).

const SUBSCRIBE_TIMEOUT_MS = 20_000;
const pushSupported =
  window.isSecureContext && 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
/** Resolves to the worker's registration, or null (no support, or registering failed). */
let workerRegistration = Promise.resolve(null);
let pushBusy = false;

function registerWorker() {
  if (!('serviceWorker' in navigator)) return;
  workerRegistration = navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch((err) => {
    console.warn('askrelay: could not register the service worker:', err);
    return null;
  });
  // A click on a notification while this tab is open: the worker asks us to show the card.
  navigator.serviceWorker.addEventListener('message', (event) => {
    if (event.data?.type !== 'open-card') return;
    let target;
    try {
      target = new URL(event.data.url, location.href);
    } catch {
      return;
    }
    if (target.origin !== location.origin) return;
    if (location.hash === target.hash) route();
    else location.hash = target.hash; // hashchange → route() → the card
  });
}

function showPushMessage(text, kind = 'info') {
  els.pushMessage.dataset.kind = kind;
  setText(els.pushMessageText, text);
  els.pushMessage.hidden = false;
}

function hidePushMessage() {
  els.pushMessage.hidden = true;
  setText(els.pushMessageText, '');
}

els.pushMessageClose.addEventListener('click', hidePushMessage);

function setPushToggle(on) {
  els.pushToggle.dataset.state = on ? 'on' : 'off';
  setText(els.pushToggle, on ? 'Disable notifications' : 'Enable notifications');
  els.pushToggle.title = on
    ? 'New cards show a notification on this device. Click to stop them.'
    : 'Show a notification on this device for every new card, even when this page is closed.';
}

async function currentSubscription() {
  const registration = await workerRegistration;
  return registration ? registration.pushManager.getSubscription().catch(() => null) : null;
}

/** After sign-in: the button shows whether this browser is subscribed; the relay is reminded of it. */
async function syncPush() {
  els.pushToggle.hidden = false;
  const subscription = pushSupported ? await currentSubscription() : null;
  setPushToggle(Boolean(subscription) && Notification.permission === 'granted');
  if (subscription && Notification.permission === 'granted') {
    // The relay may have lost it (a new data folder): POST is idempotent (200 when known).
    api('/api/push/subscriptions', { method: 'POST', json: subscription.toJSON() }).catch(() => {});
  }
}

els.pushToggle.addEventListener('click', async () => {
  if (pushBusy) return;
  pushBusy = true;
  els.pushToggle.disabled = true;
  els.pushToggle.setAttribute('aria-busy', 'true');
  try {
    if (els.pushToggle.dataset.state === 'on') await disablePush();
    else await enablePush();
  } catch (err) {
    if (!(err instanceof Unauthorized)) showPushMessage(err.message, 'error');
  } finally {
    pushBusy = false;
    els.pushToggle.disabled = false;
    els.pushToggle.removeAttribute('aria-busy');
  }
});

async function enablePush() {
  hidePushMessage();
  if (!pushSupported) {
    throw new Error(
      window.isSecureContext
        ? 'This browser cannot show notifications from the relay: it has no Web Push support. Use a current Chrome, Edge, Firefox or Safari.'
        : 'Notifications need a secure page: open the relay over https, or at http://127.0.0.1 or http://localhost.',
    );
  }
  const registration = await workerRegistration;
  if (!registration) throw new Error('The browser would not install the relay’s service worker (/sw.js), so notifications cannot work. Reload the page and try again.');
  const permission = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
  if (permission === 'denied') {
    throw new Error('Notifications are blocked for this page. Allow them in the browser’s site settings (the icon left of the address), then click Enable notifications again.');
  }
  if (permission !== 'granted') throw new Error('Notifications were not allowed. Click Enable notifications again and choose Allow.');

  const { publicKey } = await api('/api/push/key');
  await navigator.serviceWorker.ready;
  let subscription = await registration.pushManager.getSubscription();
  if (subscription && !sameKey(subscription.options?.applicationServerKey, publicKey)) {
    await subscription.unsubscribe().catch(() => {}); // made for another relay key
    subscription = null;
  }
  if (!subscription) subscription = await subscribe(registration, publicKey);
  try {
    await api('/api/push/subscriptions', { method: 'POST', json: subscription.toJSON() });
  } catch (err) {
    // Without the relay's copy nothing would ever arrive: undo the browser's side too.
    await subscription.unsubscribe().catch(() => {});
    if (err instanceof Unauthorized) throw err;
    throw new Error(`The relay refused this browser’s subscription: ${err.message}`);
  }
  setPushToggle(true);
  showPushMessage('Notifications are on. Every new card shows one on this device, even when this page is closed; a click opens the card.', 'ok');
}

async function subscribe(registration, publicKey) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error('timeout'), { name: 'TimeoutError' })), SUBSCRIBE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: fromBase64Url(publicKey) }),
      timeout,
    ]);
  } catch (err) {
    throw new Error(subscribeFailure(err));
  } finally {
    clearTimeout(timer);
  }
}

/** What went wrong with pushManager.subscribe(), in words a person can act on. */
function subscribeFailure(err) {
  const said = err?.message ? ` (the browser said: “${err.message}”)` : '';
  if (err?.name === 'TimeoutError') {
    return 'The browser’s push service did not answer. Check the internet connection and try again: the browser needs it to subscribe.';
  }
  if (err?.name === 'NotAllowedError' || /permission/i.test(err?.message ?? '')) {
    return `The browser refused a push subscription${said}. Private windows and headless browsers cannot receive pushes: open the page in a normal window, and check that notifications are allowed for this site.`;
  }
  if (err?.name === 'AbortError') {
    return `The browser could not reach its push service${said}. Check the internet connection and try again.`;
  }
  return `The browser could not subscribe to notifications${said}.`;
}

async function disablePush() {
  hidePushMessage();
  const subscription = await currentSubscription();
  if (subscription) {
    try {
      await api('/api/push/subscriptions', { method: 'DELETE', json: { endpoint: subscription.endpoint } });
    } catch (err) {
      if (err instanceof Unauthorized) throw err;
      // 404: the relay had already forgotten it, which is what we want.
      if (err.status !== 404) throw new Error(`The relay could not remove this browser’s subscription: ${err.message}`);
    }
    await subscription.unsubscribe().catch(() => {});
  }
  setPushToggle(false);
  showPushMessage('Notifications are off for this device.', 'info');
}

function fromBase64Url(text) {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const raw = atob(base64 + '='.repeat((4 - (base64.length % 4)) % 4));
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

function sameKey(buffer, publicKey) {
  if (!buffer) return true; // the browser does not say: assume it is ours
  const a = new Uint8Array(buffer);
  const b = fromBase64Url(publicKey);
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

registerWorker();

// ---------------------------------------------------------------- misc

function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

start().catch((err) => console.error('askrelay:', err));
