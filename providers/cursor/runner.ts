import { askDialect } from '../../src/relay/call-waits.js';
import * as adapter from './adapter.js';
import { ASK_USER, ASK_USER_DESCRIPTION, ASK_USER_INPUT_SCHEMA, ASK_USER_OUTPUT_SCHEMA } from './tool.js';

// The I/O around one Cursor-dialect ask_user call over MCP: the relay's shared call
// machinery (re-attach, progress, cancellation, grace) with this dialect's adapter.
/** askrelay's ask_user in the Cursor dialect, as the MCP surface serves it at /mcp. */
export const cursorDialect = askDialect(adapter, {
  name: ASK_USER,
  description: ASK_USER_DESCRIPTION,
  inputSchema: ASK_USER_INPUT_SCHEMA,
  outputSchema: ASK_USER_OUTPUT_SCHEMA,
});
