// OpenAI models run inside the Copilot runtime (a BYOK provider), so they get the same
// ask_user as Copilot's sdk engine.
export { ASK_USER, ASK_USER_PARAMETERS, AskUserInputSchema, MAX_CHOICES } from '../copilot/tool.js';
