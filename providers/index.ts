import type { AskDialect } from '../src/cards/ask-dialect.js';
import type { ProviderDeclaration } from '../src/sessions/providers.js';
import { claudeProvider } from './claude/index.js';
import { codexProvider } from './codex/index.js';
import { copilotProvider } from './copilot/index.js';
import { cursorDialect } from './cursor/index.js';
import { deepseekProvider } from './deepseek/index.js';
import { geminiProvider } from './gemini/index.js';
import { grokProvider } from './grok/index.js';
import { openaiProvider } from './openai/index.js';
import { openclawDialect } from './openclaw/index.js';

// The registry: every provider the relay can run sessions on, in the order surfaces list
// them. Each declares itself in its folder's index.ts (id, name, engines, variables, card
// waits, start checks, runner); adding one is its folder and one line here. Only the
// composition root (src/start.ts) imports this; surfaces get the plain data it makes
// (src/sessions/providers.ts: describeProviders).
export const PROVIDERS = [claudeProvider, deepseekProvider, copilotProvider, openaiProvider, grokProvider, codexProvider, geminiProvider] as const satisfies readonly ProviderDeclaration[];

export type ProviderId = (typeof PROVIDERS)[number]['id'];

/** The ask tools served over MCP, by path: Cursor's dialect at /mcp, OpenClaw's at /mcp/openclaw. */
export const MCP_DIALECTS: Record<string, AskDialect> = {
  '/mcp': cursorDialect,
  '/mcp/openclaw': openclawDialect,
};
