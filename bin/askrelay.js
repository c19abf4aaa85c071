#!/usr/bin/env node
// The command runs the TypeScript sources with no build step to remember: the first start
// after a change compiles them into one cached bundle (bin/compiled.js), and when that cannot
// be done (ASKRELAY_NO_BUNDLE=1, a read-only install) tsx runs the sources directly.
import { compiledEntry } from './compiled.js';

const entry = await compiledEntry();
if (entry) await import(entry);
else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli/main.ts');
}
