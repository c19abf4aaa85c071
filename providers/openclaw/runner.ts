import { askDialect } from '../../src/relay/call-waits.js';
import * as adapter from './adapter.js';
import { ASK_USER, ASK_USER_DESCRIPTION, ASK_USER_INPUT_SCHEMA, ASK_USER_OUTPUT_SCHEMA } from './tool.js';

// The I/O around one OpenClaw ask_user call over MCP: the shared call machinery with
// OpenClaw's adapter (the card waits timeoutSeconds; the result is answered / no_answer).
/** OpenClaw's ask_user, as the MCP surface serves it at /mcp/openclaw. */
export const openclawDialect = askDialect(adapter, {
  name: ASK_USER,
  description: ASK_USER_DESCRIPTION,
  inputSchema: ASK_USER_INPUT_SCHEMA,
  outputSchema: ASK_USER_OUTPUT_SCHEMA,
});
