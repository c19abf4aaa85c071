import type { AskDialect } from '../../cards/ask-dialect.js';
import type { RelayToolbox } from '../../sessions/relay-tool.js';

// The tools one MCP route offers: its dialect's ask_user, and the relay tool when the relay
// has one (list_questions, answer_question, start_session, watch_session).

/** What tools/list shows: ask_user only asks (read-only, nothing outside the relay), then the relay tool. */
export function listedTools(dialect: AskDialect, toolbox?: RelayToolbox) {
  return [
    { ...dialect.tool, annotations: { readOnlyHint: true, openWorldHint: false } },
    ...(toolbox ? toolbox.definitions.map(({ name, description, inputSchema }) => ({ name, description, inputSchema })) : []),
  ];
}

/** The names a call may use, for the refusal of any other. */
export const toolNames = (dialect: AskDialect, toolbox?: RelayToolbox): string[] => [dialect.tool.name, ...(toolbox ? toolbox.definitions.map((t) => t.name) : [])];
