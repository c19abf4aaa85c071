// The New session form (POST /api/sessions), and the provider names the page shows.
import { Unauthorized, api } from './api.js';
import { $, els, h, setText } from './dom.js';
import { capitalize } from './format.js';
import { actions, store } from './store.js';

// The provider tables stay here until the page reads them from GET /api/providers.
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

export const providerName = (provider) => PROVIDER_NAME[provider] ?? provider ?? 'Agent';
/** `claude · messages`: the ids, as the API and the CLI spell them; the names in the tooltip. */
export const providerLabel = (provider, engine) => (engine ? `${provider} · ${engine}` : provider ?? '');
export const providerTitle = (provider, engine) =>
  engine ? `${providerName(provider)}, ${engine} engine` : providerName(provider);

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

async function startSession(event) {
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
  f.engine.addEventListener('change', syncEngineHints);
  f.askUserVariant.addEventListener('change', syncEngineHints);
  syncEngines({ keep: false });
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
