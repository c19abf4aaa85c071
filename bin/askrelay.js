#!/usr/bin/env node
// The command runs the TypeScript sources directly through tsx, so there is no build step
// between editing the code and running it.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
