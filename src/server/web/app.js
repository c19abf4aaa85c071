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
    else if (key === 'dataset') Object.assign(el.dataset, value);
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
  els.logout.hidden = true;
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
  showLogin();
});

async function start() {
  const ok = await reload();
  if (!ok) return;
  signedIn = true;
  els.login.hidden = true;
  els.board.hidden = false;
  els.logout.hidden = false;
  els.conn.hidden = false;
  connect();
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
    reload(); // events are not replayed: whatever happened while away comes from the list
  });
  const onCard = (event) => {
    try {
      upsert(JSON.parse(event.data));
    } catch (err) {
      console.error('askrelay: bad event', err);
    }
  };
  source.addEventListener('card.created', onCard);
  source.addEventListener('card.updated', onCard);
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
    list = (await api('/api/cards?status=pending')).cards;
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
  els.empty.hidden = n > 0;
  document.title = n > 0 ? `(${n}) askrelay` : 'askrelay';
  els.recent.hidden = els.recentList.children.length === 0;
  markKeyboardTarget();
}

function renderCard(entry) {
  const { card } = entry;
  const titleId = nextId('card-title');
  const chips = h('div', { class: 'chips' },
    h('span', { class: 'chip chip-provider', dataset: { testid: 'provider' } }, card.engine ? `${card.provider} · ${card.engine}` : card.provider),
    card.kind === 'approval' ? h('span', { class: 'chip chip-approval' }, 'Approval') : null,
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
    class: 'card',
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
  entry.parts = { body, error, status, skip, stepper, back };
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
    h('p', { class: 'question-text', id: textId }, q.text),
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

function closeCard(entry) {
  const { card, el, parts } = entry;
  el.dataset.status = card.status;
  el.classList.add('closed');
  setDisabled(el, true);
  parts.back.hidden = true;
  entry.ui.countdown.hidden = true;
  setText(parts.status, describeClosed(card));
  parts.status.hidden = false;
  if (card.status === 'answered') markChosen(entry);
  if (activeId === card.id) activeId = null;
  refreshBoard();
  setTimeout(() => moveToRecent(entry), RECENT_AFTER_MS);
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
  if (card.status === 'answered') {
    const by = card.answeredBy?.kind === 'agent' ? ` (by agent ${card.answeredBy.id})` : '';
    return `${word}: ${describeAnswer(card)}${by}`;
  }
  if (card.status === 'expired') return `${word}: nobody answered in time`;
  if (card.status === 'cancelled') return `${word}: the session stopped`;
  return word;
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
  if (!/^[1-9]$/.test(event.key)) return;
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

// ---------------------------------------------------------------- misc

function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

start().catch((err) => console.error('askrelay:', err));
