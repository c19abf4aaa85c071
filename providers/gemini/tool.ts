// Gemini CLI in ACP mode has no question tool of its own (it drops its ask_user there, and
// any MCP tool named ask_user with it), so askrelay serves one over MCP: Cursor's ask_user
// (providers/cursor/tool.ts), the same schema and result, under the name ask_human. Gemini
// names MCP tools `mcp_<server>_<tool>`, so its model sees mcp_askrelay_ask_human, beside the
// relay tool (mcp_askrelay_list_questions, …).

export const ASK_HUMAN = 'ask_human';
export const MCP_SERVER_NAME = 'askrelay';
/** The ask tool as Gemini's model sees it. */
export const GEMINI_ASK_TOOL = `mcp_${MCP_SERVER_NAME}_${ASK_HUMAN}`;

export const GEMINI_FORM = { tool: 'elicitation', name: 'Gemini CLI' } as const;
