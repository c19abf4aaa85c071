export {
  ASK_USER,
  ASK_USER_DESCRIPTION,
  ASK_USER_TOOL,
  AskUserInputSchema,
  AskUserOutputSchema,
  clampTimeout,
  DEFAULT_TIMEOUT_SECONDS,
  ID_PATTERN,
  MAX_HEADER,
  MAX_LABEL,
  MAX_OPTIONS,
  MAX_QUESTIONS,
  MAX_TIMEOUT_SECONDS,
  MIN_OPTIONS,
  MIN_TIMEOUT_SECONDS,
  TEXTS,
} from './tool.js';
export { asksForCredential, PROVIDER, toCardDraft, toToolError, toToolResult } from './adapter.js';
export type { StructuredResult, ToolError, ToolResult } from './adapter.js';
export { openclawDialect } from './runner.js';
