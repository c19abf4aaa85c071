import { describe, expect, it } from 'vitest';
import { PROVIDERS } from '../../providers/index.js';
import { SERVE_HELP } from '../../src/cli/serve-command.js';
import { describeProviders, engineWaitSettings, orList, providerIdSchema, runnerFactories } from '../../src/sessions/providers.js';
import { relayToolDefinitions } from '../../src/sessions/relay-tool.js';
import { goldenRelayTools } from '../support/golden.js';

// The registry (providers/index.ts) as plain data: what GET /api/providers, the session
// manager and the relay tool are given. No relay runs here.

const HOUR = 3600;

describe('the provider registry', () => {
  it('lists each provider once, in order, with one default engine each', () => {
    const info = describeProviders(PROVIDERS, {}, 8 * HOUR * 1000);
    expect(info.map((p) => p.id)).toEqual(['claude', 'deepseek', 'copilot', 'openai', 'grok', 'codex', 'gemini']);
    for (const p of info) expect(p.engines.filter((e) => e.default), p.id).toHaveLength(1);
    expect(info.find((p) => p.id === 'claude')?.variables).toEqual(['ANTHROPIC_BASE_URL', 'ANTHROPIC_API_KEY']);
  });

  it('gives the extension engine its own wait (ASKRELAY_WAIT_EXTENSION, 2 h by default), every other engine ASKRELAY_WAIT', () => {
    const waits = (env: NodeJS.ProcessEnv) =>
      describeProviders(PROVIDERS, env, 8 * HOUR * 1000).flatMap((p) => p.engines.map((e) => `${p.id}/${e.id} ${e.waitSeconds}`));
    expect(waits({})).toEqual([
      'claude/code 28800', 'claude/messages 28800', 'deepseek/code 28800', 'deepseek/messages 28800',
      'copilot/sdk 28800', 'copilot/extension 7200', 'openai/sdk 28800', 'openai/extension 7200', 'grok/chat 28800', 'codex/acp 28800', 'gemini/acp 28800',
    ]);
    expect(waits({ ASKRELAY_WAIT_EXTENSION: '90s' })).toContain('openai/extension 90');
    expect(() => describeProviders(PROVIDERS, { ASKRELAY_WAIT_EXTENSION: 'later' }, 1000)).toThrow(/^ASKRELAY_WAIT_EXTENSION: /);
  });

  it('names each engine wait setting once, with its default and the engines that read it (for serve --help)', () => {
    expect(engineWaitSettings(PROVIDERS)).toEqual([{ variable: 'ASKRELAY_WAIT_EXTENSION', default: '2h', engines: ['copilot/extension', 'openai/extension'] }]);
    expect(SERVE_HELP).toContain('Card waits: ASKRELAY_WAIT (default 8h);\nASKRELAY_WAIT_EXTENSION (default 2h) on copilot/extension, openai/extension.');
  });

  it('hands the session manager runner factories with the default engine first and each engine\'s wait', () => {
    const factories = runnerFactories(PROVIDERS, describeProviders(PROVIDERS, { ASKRELAY_WAIT_EXTENSION: '2s' }, 60_000));
    expect(Object.keys(factories)).toEqual(['claude', 'deepseek', 'copilot', 'openai', 'grok', 'codex', 'gemini']);
    expect(factories.copilot.engines).toEqual(['sdk', 'extension']);
    expect(factories.copilot.waitsMs).toEqual({ sdk: 60_000, extension: 2000 });
    expect(factories.openai.askUserVariants).toEqual({ extension: ['classic', 'form'] });
    expect(factories.copilot.checkStart?.({ engine: 'sdk', askUserVariant: 'form' })).toMatch(/extension engine only/);
    expect(factories.copilot.checkStart?.({ engine: 'extension', askUserVariant: 'form' })).toBeUndefined();
    expect(factories.claude.checkStart).toBeUndefined();
  });

  it('names the providers in start_session\'s description and schema, and refuses another id', () => {
    const ids = PROVIDERS.map((p) => p.id);
    const start = relayToolDefinitions(ids).find((t) => t.name === 'start_session');
    expect(start?.description).toContain('(provider claude, deepseek, copilot, openai, grok, codex or gemini)');
    expect((start?.inputSchema.properties as Record<string, { enum?: string[] }>).provider.enum).toEqual(ids);
    expect(providerIdSchema(ids).safeParse('mistral').success).toBe(false);
    // Built from the registry, the four tools are still byte for byte what the providers were seen offering.
    const offered = relayToolDefinitions(ids).map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
    expect(JSON.stringify(offered)).toBe(JSON.stringify(goldenRelayTools()));
    expect(orList(['a'])).toBe('a');
    expect(orList(['a', 'b', 'c'])).toBe('a, b or c');
  });
});
