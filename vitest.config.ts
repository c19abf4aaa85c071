import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // ASKRELAY_TEST_NODES=2 (npm run test:two-nodes): relays in tests are two nodes on PostgreSQL.
    ...(process.env.ASKRELAY_TEST_NODES === '2' ? { globalSetup: ['test/support/two-node-setup.ts'] } : {}),
  },
});
