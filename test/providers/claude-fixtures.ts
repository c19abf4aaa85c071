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
