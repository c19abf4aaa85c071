import type { AskDialect } from '../../src/cards/ask-dialect.js';
import { PROVIDER, toCardDraft, toToolError, toToolResult, type ToolError, type ToolResult } from './adapter.js';
import { ASK_USER_TOOL, TEXTS } from './tool.js';

// An OpenClaw-style agent runs wherever its owner runs it and reaches askrelay over MCP, so
// askrelay runs no agent for it: what it runs is OpenClaw's ask_user, as this plain dialect
// (the tool and its pure adapter; the card waits timeoutSeconds, the result is answered or
// no_answer). The composition root hands it to the MCP surface (src/server/mcp/), which serves
// it at /mcp/openclaw and does every bit of I/O around a call.

/** OpenClaw's ask_user, as the MCP surface serves it at /mcp/openclaw. */
export const openclawDialect: AskDialect<ToolResult, ToolError> = {
  name: 'openclaw',
  provider: PROVIDER,
  tool: ASK_USER_TOOL,
  toCardDraft,
  toToolResult,
  toToolError,
  onePendingPerSession: TEXTS.pending,
};
