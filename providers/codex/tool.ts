// Codex's own question tool, request_user_input, belongs to Codex: the model sees Codex's
// schema (`questions[{id, header, question, options[{label, description}]}]`) and Codex
// offers it only in Plan mode. codex-acp hands each call to askrelay as an ACP form
// elicitation: per question a property `<id>` (one of the labels, plus "None of the
// above") and `<id>_note` (free text); the answer Codex writes back for its model is
// `{"answers": {"<id>": {"answers": ["<label>", "user_note: <text>"]}}}`.

export const REQUEST_USER_INPUT = 'request_user_input';

/** The option codex-acp adds to every question: the user's own words go in the note. */
export const NONE_OF_THE_ABOVE = 'None of the above';

/** The note field of a question (`_meta.codex.role` "user_note"). */
export const NOTE_SUFFIX = '_note';

/** Outside Plan mode Codex has no question tool of its own: it asks through askrelay's ask_user (MCP, the mcp__askrelay namespace). */
export const ASK_USER = 'ask_user';

/** Codex's message on every elicitation it sends for request_user_input. */
export const CODEX_ASKS = 'Codex needs your input to continue.';

export const CODEX_FORM = { tool: REQUEST_USER_INPUT, name: 'Codex' } as const;
