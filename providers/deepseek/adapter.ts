// Same tool, same answer formats as Claude: Claude Code writes the tool_result itself.
export { toCardDraft, toToolResult, toUpdatedInput } from '../claude/adapter.js';
