// A key an MCP client may put on a tools/call (`_meta["askrelay/callKey"]`) and keep across
// reconnects, so that the call, re-sent on a new MCP session or to a restarted relay, finds
// the card it already asked instead of asking the human again. `askrelay mcp` sets it on
// every call it forwards (src/cli/mcp-bridge.ts); the MCP endpoint reads it
// (src/server/mcp/tool-calls.ts). Here, outside both, so neither imports the other.

/** The `_meta` key under which a client names a call. */
export const CALL_KEY = 'askrelay/callKey';
/** A longer key is ignored (the call is then matched by its arguments alone). */
export const MAX_CALL_KEY = 200;
