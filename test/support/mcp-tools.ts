/** What /mcp and /mcp/openclaw list: the dialect's ask_user, then the relay tool. */
export const MCP_TOOLS = ['ask_user', 'list_questions', 'answer_question', 'start_session', 'watch_session'];
