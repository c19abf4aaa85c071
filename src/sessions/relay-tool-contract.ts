// The relay tool as a runner sees it (RunnerContext.relayTools, src/sessions/runner.ts): its
// names, a definition to show the model, and what a call gives back. Kept apart from the tool
// itself (relay-tool.ts), which runs calls for a session's runner, so that the runner seam
// and the tool do not import each other.

export const RELAY_TOOL_NAMES = ['list_questions', 'answer_question', 'start_session', 'watch_session'] as const;
export type RelayToolName = (typeof RELAY_TOOL_NAMES)[number];

/** A relay tool as a provider shows it to its model: name, description, JSON schema of the input. */
export interface RelayToolDefinition {
  name: RelayToolName;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  /** The call may open an approval card, so it may wait on the human (days): runners keep it across a restart. */
  waits: boolean;
}

/** What the model reads back: one text, an error or not. */
export interface RelayToolResult {
  text: string;
  isError: boolean;
}
