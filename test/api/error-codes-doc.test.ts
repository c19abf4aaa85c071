import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { errorTable } from '../../src/errors.js';

// docs/api.md lists every error code with its status: an operator reads it there, not in the source.

it('docs/api.md has a row for every error code, with its status', () => {
  const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  const rows = doc.split('\n').filter((line) => line.startsWith('| `'));
  for (const [code, status] of Object.entries(errorTable)) {
    const row = rows.find((line) => line.split('|')[1].includes(`\`${code}\``));
    expect(row, `a row for ${code}`).toBeDefined();
    expect(row!.split('|')[2].trim(), `the status of ${code}`).toBe(String(status));
  }
});
