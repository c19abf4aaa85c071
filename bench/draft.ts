import type { CardDraft } from '../src/cards/model.js';

/** A card shaped like what agents ask: a title, one question, three options. */
export function benchDraft(title: string): CardDraft {
  return {
    title,
    questions: [
      {
        header: 'Database',
        text: 'Which database should the new service use for its job queue?',
        options: [
          { label: 'PostgreSQL (Recommended)', description: 'Already run in production; SKIP LOCKED queues.' },
          { label: 'SQLite', description: 'One file, no server; fine for a single node.' },
          { label: 'Redis', description: 'Fast, but another thing to operate.' },
        ],
      },
    ],
  };
}

/** The answer every bench card gets: one of its options. */
export const BENCH_ANSWER = { q1: { selected: ['SQLite'] } };
