import type { CardInput } from '../../src/cards/model.js';

/**
 * Four cards that show most of what a card can be (described options, a steps card, a card
 * whose question may take several answers, a form): the web page's layout test lays them out,
 * and scripts/screenshots.ts takes its pictures of the board with them.
 */
export const BOARD_CARDS = {
  storage: {
    title: 'Pick the storage for the new service',
    questions: [
      {
        header: 'Database',
        text: 'Which database should the orders service use?',
        options: [
          { label: 'PostgreSQL (Recommended)', description: 'Same as the other services; backups already set up' },
          { label: 'SQLite', description: 'One file, no server to run' },
          { label: 'DynamoDB', description: 'Managed, but new to the team' },
        ],
      },
    ],
  },
  steps: {
    title: 'Release checklist',
    questions: [
      { header: 'Checks', text: 'Which checks should run before the release?', multiSelect: true, options: ['Unit tests', 'End-to-end tests', 'Load test'] },
      { header: 'Channel', text: 'Which channel?', options: ['Stable', 'Beta'] },
      { header: 'Notes', text: 'Anything for the notes?' },
    ],
  },
  multi: { selectSeveral: true, questions: [{ text: 'Which logs should be kept?', options: ['Access logs', 'Error logs', 'Debug logs'] }] },
  form: {
    layout: 'form',
    title: 'New project',
    questions: [
      { id: 'name', text: 'Project name', field: { type: 'string' } },
      { id: 'replicas', text: 'Replicas', field: { type: 'number' } },
      { id: 'public', text: 'Public repository?', field: { type: 'boolean' } },
      { id: 'region', text: 'Region', options: ['eu-west', 'us-east'] },
    ],
  },
} satisfies Record<string, CardInput>;
