import type { ProviderId } from '../src/sessions/model.js';
import type { RunnerFactory } from '../src/sessions/runner.js';
import { claudeRunner } from './claude/index.js';
import { copilotProvider } from './copilot/index.js';
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
