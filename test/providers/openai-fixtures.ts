// Relay environments whose OpenAI-compatible sessions run offline, against the scripted Chat
// Completions server (test/fakes/openai-server.ts) at `url`.

/**
 * Copilot / OpenAI through the real @github/copilot-sdk runtime with a BYOK provider, with the
 * runtime's home and work folder in `home`.
 */
export const copilotRelayEnv = (url: string, home: string) => ({
  OPENAI_BASE_URL: url,
  OPENAI_API_KEY: 'sk-test',
  COPILOT_PROVIDER_BASE_URL: url,
  COPILOT_PROVIDER_API_KEY: 'copilot-byok',
  HOME: home,
  ASKRELAY_WORKDIR: home,
});

/** The key the scripted server takes from Grok: start it with `apiKey: GROK_KEY`. */
export const GROK_KEY = 'xai-test';

/** Grok on its default model. */
export const grokRelayEnv = (url: string) => ({ XAI_BASE_URL: url, XAI_API_KEY: GROK_KEY, XAI_MODEL: '' });
