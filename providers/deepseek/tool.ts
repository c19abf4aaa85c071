// DeepSeek runs Claude Code (or the relay's Messages loop) against its Anthropic-compatible
// API, so the model sees Claude Code's own AskUserQuestion.
export { ASK_USER_QUESTION, ASK_USER_QUESTION_TOOL } from '../claude/tool.js';
