import { CallWaits, type CallTiming, type McpDialect } from '../../src/relay/call-waits.js';
import type { Relay } from '../../src/relay/relay.js';
import * as adapter from './adapter.js';
import { ASK_USER, ASK_USER_DESCRIPTION, ASK_USER_INPUT_SCHEMA, ASK_USER_OUTPUT_SCHEMA } from './tool.js';

// The I/O around one Cursor-dialect ask_user call over MCP: the relay's shared call
// machinery (re-attach, progress, cancellation, grace) with this dialect's adapter.
export const cursorWaits = (relay: Relay, timing?: CallTiming) => new CallWaits(relay, adapter, timing);

type JsonSchema = McpDialect['tool']['inputSchema'];

/** askrelay's ask_user in the Cursor dialect, as the MCP surface serves it at /mcp. */
export const cursorDialect: McpDialect = {
  tool: {
    name: ASK_USER,
    title: 'Ask the user',
    description: ASK_USER_DESCRIPTION,
    inputSchema: ASK_USER_INPUT_SCHEMA as unknown as JsonSchema,
    outputSchema: ASK_USER_OUTPUT_SCHEMA as unknown as JsonSchema,
  },
  waits: cursorWaits,
};
