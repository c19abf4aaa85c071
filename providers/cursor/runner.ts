import type { AskDialect } from '../../src/cards/ask-dialect.js';
import { PROVIDER, toCardDraft, toToolError, toToolResult, type ToolError, type ToolResult } from './adapter.js';
import { ASK_USER_TOOL } from './tool.js';

// Cursor's agent runs on the user's machine and reaches askrelay over MCP, so askrelay runs
// no agent for it: what it runs is Cursor's ask_user, as this plain dialect (the tool and its
// pure adapter). The composition root hands it to the MCP surface (src/server/mcp/), which
// serves it at /mcp and does every bit of I/O around a call (re-attach, progress, grace).

/** askrelay's ask_user in the Cursor dialect, as the MCP surface serves it at /mcp. */
export const cursorDialect: AskDialect<ToolResult, ToolError> = {
  name: 'cursor',
  provider: PROVIDER,
  tool: ASK_USER_TOOL,
  toCardDraft,
  toToolResult,
  toToolError,
};
