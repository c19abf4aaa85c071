import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { dropDatabasesStartingWith } from './postgres.js';

// Global set-up of the two-node run (ASKRELAY_TEST_NODES=2, vitest.config.ts): a prefix for
// the databases this run makes. A test that restarts a relay on its own data folder keeps
// the folder's database until then; whatever is left with this run's prefix goes at the end.

declare module 'vitest' {
  export interface ProvidedContext {
    twoNodeDatabasePrefix: string;
  }
}

export default function setup(project: TestProject) {
  const prefix = `askrelay_2n_${randomBytes(4).toString('hex')}_`;
  project.provide('twoNodeDatabasePrefix', prefix);
  return async () => {
    await dropDatabasesStartingWith(prefix);
  };
}
