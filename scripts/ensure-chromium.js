#!/usr/bin/env node
// The browser tests drive Debian's Chromium. When it is missing, install it (as root)
// rather than skip the tests; elsewhere say exactly what to run.
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHROMIUM = process.env.ASKRELAY_CHROMIUM ?? '/usr/bin/chromium';

if (!existsSync(CHROMIUM)) {
  if (process.getuid?.() !== 0) {
    console.error(`Chromium is missing at ${CHROMIUM}. Install it with: sudo apt-get update && sudo apt-get install -y chromium`);
    process.exit(1);
  }
  console.log('Chromium is missing; installing Debian\'s chromium package for the browser tests…');
  execSync('apt-get update && apt-get install -y chromium', { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}
