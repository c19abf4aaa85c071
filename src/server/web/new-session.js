// The New session form (POST /api/sessions) and the provider names the page shows, both
// from the relay's own list (GET /api/providers), fetched once into the store: the form
// cannot start a session before that list is there, and says so when it could not come.
import { Unauthorized, api } from './api.js';
import { $, els, h, setText } from './dom.js';
import { capitalize } from './format.js';
import { engineOf, nameOf, providerChoices, providerOf, variantHint } from './provider-choices.js';
import { actions, store } from './store.js';

export const providerName = (provider) => nameOf(store.providers, provider);
/** `claude · messages`: the ids, as the API and the CLI spell them; the names in the tooltip. */
export const providerLabel = (provider, engine) => (engine ? `${provider} · ${engine}` : provider ?? '');
export const providerTitle = (provider, engine) =>
  engine ? `${providerName(provider)}, ${engine} engine` : providerName(provider);

/**
 * Asks the relay for its providers unless they are here (or on their way); after a failure,
 * opening the form asks again. Never rejects: the form shows what went wrong.
 */
export function loadProviders() {
  if (store.providers) return Promise.resolve();
  store.providersLoad ??= (async () => {
    store.providersError = null;
    syncFormState();
    try {
      const choices = providerChoices(await api('/api/providers'));
      if (!choices.length) throw new Error('The relay offers no provider to run a session on.');
      store.providers = choices;
      const f = els.newSessionForm.elements;
      f.provider.replaceChildren(...choices.map((p) => h('option', { value: p.id }, p.name)));
      f.provider.options[0].defaultSelected = true; // the one reset() goes back to
      syncEngines({ keep: false });
    } catch (err) {
      // Signed out: signing in asks again.
      if (!(err instanceof Unauthorized)) store.providersError = err.message;
    } finally {
      store.providersLoad = null;
      syncFormState();
    }
  })();
  return store.providersLoad;
}

/** `data-state` loading | ready | failed: only a ready form can be filled in and sent. */
function syncFormState() {
  const state = store.providers ? 'ready' : store.providersError ? 'failed' : 'loading';
  const f = els.newSessionForm.elements;
  els.newSessionForm.dataset.state = state;
  for (const select of [f.provider, f.engine, f.askUserVariant]) select.disabled = state !== 'ready';
  els.startSession.disabled = state !== 'ready';
  const status = $('[data-testid="new-session-status"]');
  setText(
    status,
    state === 'failed'
      ? `Could not load the relay’s providers, so no session can start yet. ${store.providersError} Close the form and open it again to retry.`
      : 'Loading the relay’s providers…',
  );
  status.classList.toggle('note', state !== 'failed'); // a warning while it loads, an error once it failed
  status.hidden = state === 'ready';
}

/** Fills a select with these values unless it holds them already; the first is its default. */
function fillSelect(select, values, { keep }) {
  const current = select.value;
  const same = select.options.length === values.length && values.every((value, i) => select.options[i].value === value);
  if (same) return;
  select.replaceChildren(...values.map((value) => h('option', { value }, value)));
  if (!values.length) return;
  select.options[0].defaultSelected = true; // the one reset() goes back to
  select.value = keep && values.includes(current) ? current : values[0];
}

/** The engine select follows the provider: its engines, its default first. */
function syncEngines({ keep = true } = {}) {
  const f = els.newSessionForm.elements;
  const engines = providerOf(store.providers, f.provider.value)?.engines ?? [];
  fillSelect(f.engine, engines.map((e) => e.id), { keep });
  syncEngineHints({ keep });
}

/** Each select says what its choice means; the ask_user variant shows where the engine offers variants. */
function syncEngineHints({ keep = true } = {}) {
  const f = els.newSessionForm.elements;
  const engine = engineOf(store.providers, f.provider.value, f.engine.value);
  setText($('#session-engine-hint'), capitalize(engine?.name ?? ''));
  fillSelect(f.askUserVariant, engine?.variants ?? [], { keep });
  setText($('#session-ask-user-hint'), variantHint(f.askUserVariant.value));
  $('[data-testid="session-ask-user-row"]').hidden = !engine?.variants.length;
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
  if (open) {
    void loadProviders();
    els.newSessionForm.elements.prompt.focus();
  } else els.newSession.focus({ preventScroll: true });
}

async function startSession(event) {
  event.preventDefault();
  const f = els.newSessionForm.elements;
  const engine = engineOf(store.providers, f.provider.value, f.engine.value);
  if (!engine) return; // the providers have not arrived: the form says so
  const prompt = f.prompt.value;
  if (!prompt.trim()) {
    showNewSessionError('Write the prompt first: it is the agent’s first message.');
    f.prompt.focus();
    return;
  }
  const body = {
    provider: f.provider.value,
    engine: engine.id,
    prompt,
    relayMode: f.relayMode.value,
    agentsMayAnswer: f.agentsMayAnswer.checked,
  };
  if (engine.variants.length) body.askUserVariant = f.askUserVariant.value;
  const model = f.model.value.trim();
  if (model) body.model = model;
  els.startSession.disabled = true;
  setText(els.startSession, 'Starting…');
  els.newSessionError.hidden = true;
  try {
    const s = await api('/api/sessions', { method: 'POST', json: body });
    store.sessionTitles.set(s.id, prompt);
    actions.upsertSession(s, { fromDetail: true });
    resetNewSession();
    toggleNewSession(false);
    actions.navigate(`#sessions/${encodeURIComponent(s.id)}`);
  } catch (err) {
    if (!(err instanceof Unauthorized)) showNewSessionError(err.message);
  } finally {
    els.startSession.disabled = false;
    setText(els.startSession, 'Start session');
  }
}

function showNewSessionError(message) {
  setText(els.newSessionError, message);
  els.newSessionError.hidden = false;
}

export function initNewSession() {
  const f = els.newSessionForm.elements;
  f.provider.addEventListener('change', () => syncEngines());
  f.engine.addEventListener('change', () => syncEngineHints());
  f.askUserVariant.addEventListener('change', () => syncEngineHints());
  syncFormState();
  els.newSession.addEventListener('click', () => toggleNewSession(true));
  els.newSessionCancel.addEventListener('click', () => toggleNewSession(false));
  f.prompt.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) {
      e.preventDefault();
      els.newSessionForm.requestSubmit();
    }
  });
  els.newSessionForm.addEventListener('submit', startSession);
}
