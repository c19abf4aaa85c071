import { describe, expect, it } from 'vitest';
import { PROVIDERS } from '../../providers/index.js';
import { demoEnv, demoPlan } from '../../src/cli/demo-plan.js';
import { describeProviders } from '../../src/sessions/providers.js';

// What `askrelay demo` plays and the environment it runs its relay with, from the registry
// (the demo itself is run end to end in test/cli/demo.test.ts). No relay runs here.

const providers = describeProviders(PROVIDERS, {}, 0);
const URLS = { messages: 'http://127.0.0.1:1/', chat: 'http://127.0.0.1:2/', gemini: 'http://127.0.0.1:3/' };

describe('the demo plan', () => {
  it('plays every provider engine its scripted models speak, those without a runtime first', () => {
    const plan = demoPlan(providers, true);
    expect(plan.sessions.map((s) => `${s.provider}/${s.engine}`)).toEqual([
      'claude/messages', 'deepseek/messages', 'claude/code', 'deepseek/code', 'copilot/sdk', 'openai/sdk', 'codex/acp', 'gemini/acp',
    ]);
    // Codex asks only in Plan mode: the demo starts it there.
    expect(plan.sessions.filter((s) => s.plan).map((s) => s.provider)).toEqual(['codex']);
    expect([...plan.wires]).toEqual([['claude', 'messages'], ['deepseek', 'messages'], ['copilot', 'chat'], ['openai', 'chat'], ['codex', 'chat'], ['gemini', 'gemini']]);
    expect(demoPlan(providers, false).sessions.map((s) => `${s.provider}/${s.engine}`)).toEqual(['claude/messages', 'deepseek/messages']);
  });

  it("points each played provider's variables at its wire's scripted model, and leaves out the user's own endpoints and the relay's settings", () => {
    const base = {
      PATH: '/bin',
      HOME: '/home/me',
      ANTHROPIC_MODEL: 'claude-real',
      DEEPSEEK_API_KEY: 'sk-real',
      OPENAI_ORG: 'org',
      COPILOT_PROVIDER_TYPE: 'azure',
      XAI_API_KEY: 'xai-real',
      CLAUDE_CODE_USE_BEDROCK: '1',
      ASKRELAY_PORT: '9999',
    };
    const { wires } = demoPlan(providers, true);
    expect(demoEnv(base, providers, { wires, urls: URLS }, '/scratch/home', '/scratch/work')).toEqual({
      PATH: '/bin',
      ANTHROPIC_BASE_URL: URLS.messages,
      ANTHROPIC_API_KEY: 'demo',
      DEEPSEEK_BASE_URL: URLS.messages,
      DEEPSEEK_API_KEY: 'demo',
      COPILOT_PROVIDER_BASE_URL: URLS.chat,
      COPILOT_PROVIDER_API_KEY: 'demo',
      COPILOT_MODEL: 'gpt-scripted',
      OPENAI_BASE_URL: URLS.chat,
      OPENAI_API_KEY: 'demo',
      OPENAI_MODEL: 'gpt-scripted',
      GOOGLE_GEMINI_BASE_URL: URLS.gemini,
      GEMINI_API_KEY: 'demo',
      HOME: '/scratch/home',
      ASKRELAY_WORKDIR: '/scratch/work',
      CLAUDE_CODE_TOTAL_TOKENS_REMINDER: 'off',
    });
  });
});
