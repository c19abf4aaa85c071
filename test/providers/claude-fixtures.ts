import { askingModel, type ScriptedModel, type ScriptStep } from '../fakes/anthropic-server.js';

// AskUserQuestion inputs the Claude tests share. The second label contains ", " on
// purpose: Claude Code quotes such a label when it is picked with another.

export const dbQuestion = (multiSelect = false) => ({
  question: 'Which database?',
  header: 'DB',
  multiSelect,
  options: [
    { label: 'PostgreSQL', description: 'What the others use' },
    { label: 'MySQL, MariaDB', description: 'The pair' },
    { label: 'SQLite', description: 'No server' },
  ],
});

export const cacheQuestion = {
  question: 'Which cache?',
  header: 'Cache',
  multiSelect: false,
  options: [
    { label: 'Redis', description: 'r' },
    { label: 'None', description: 'n' },
  ],
};

/**
 * A relay environment whose Claude sessions run offline, on either engine, against the
 * scripted Messages server at `url`, with Claude Code's home and work folder in `home`.
 */
export const claudeRelayEnv = (url: string, home: string, wait = '1h') => ({
  ANTHROPIC_BASE_URL: url,
  ANTHROPIC_API_KEY: 'dummy',
  HOME: home,
  ASKRELAY_WORKDIR: home,
  CLAUDE_CODE_TOTAL_TOKENS_REMINDER: 'off',
  ASKRELAY_WAIT: wait,
});

/** The `[case:<name>/<more>]` tag in a request's messages (the tests put it in the prompt). */
export const tagOf = (request: { messages?: unknown }) => /\[case:([^\]]+)\]/.exec(JSON.stringify(request.messages ?? ''))?.[1];

/**
 * A model that plays `scripts[<name>]` (see askingModel) for each session whose prompt is
 * tagged `[case:<name>/…]`, one script instance per tag.
 */
export function casesModel(scripts: Record<string, ScriptStep[]>): ScriptedModel {
  const models = new Map<string, ScriptedModel>();
  return (request, index) => {
    const tag = tagOf(request) ?? '';
    const script = scripts[tag.split('/')[0]!];
    if (!script) return { text: `no case ${tag}` };
    if (!models.has(tag)) models.set(tag, askingModel(script));
    return models.get(tag)!(request, index);
  };
}
