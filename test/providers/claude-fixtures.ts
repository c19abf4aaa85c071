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
