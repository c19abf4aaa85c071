import type { ProviderId } from '../src/sessions/model.js';
import type { RunnerFactory } from '../src/sessions/runner.js';
import { claudeRunner } from './claude/index.js';
import type { McpDialect } from '../src/relay/call-waits.js';
import { copilotProvider } from './copilot/index.js';
import { cursorDialect } from './cursor/index.js';
import { openclawDialect } from './openclaw/index.js';
import { deepseekRunner } from './deepseek/index.js';
import { grokProvider } from './grok/index.js';
import { openaiProvider } from './openai/index.js';

// Every provider the relay can run sessions on. Only the composition root (src/start.ts)
// imports this; surfaces never do.
export const PROVIDERS: Partial<Record<ProviderId, RunnerFactory>> = {
  claude: claudeRunner,
  deepseek: deepseekRunner,
  copilot: copilotProvider,
  openai: openaiProvider,
  grok: grokProvider,
};

/** The ask tools served over MCP, by path: Cursor's dialect at /mcp, OpenClaw's at /mcp/openclaw. */
export const MCP_DIALECTS: Record<string, McpDialect> = {
  '/mcp': cursorDialect,
  '/mcp/openclaw': openclawDialect,
};
