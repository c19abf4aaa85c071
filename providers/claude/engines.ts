import type { EngineDeclaration } from '../../src/sessions/providers.js';

// Claude's two engines, shared with every Anthropic-compatible API (DeepSeek).

export const ANTHROPIC_ENGINES: readonly EngineDeclaration[] = [
  { id: 'code', name: 'Claude Code', default: true },
  { id: 'messages', name: 'the relay’s own Messages API loop' },
];
