#!/usr/bin/env node
// The browser tests drive Debian's Chromium and the terminal UI tests drive `askrelay tui`
// inside tmux. When either is missing, install it (as root, from Debian's packages) rather
// than skip those tests; elsewhere say exactly what to run and stop.
import { execFileSync, execSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// The browser tests read CHROMIUM_PATH (test/browser/chromium.ts).
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

function hasTmux() {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const missing = [];
if (!existsSync(CHROMIUM)) missing.push({ pkg: 'chromium', why: `Chromium is missing at ${CHROMIUM} (browser tests)` });
if (!hasTmux()) missing.push({ pkg: 'tmux', why: 'tmux is missing (terminal UI tests)' });

if (missing.length > 0) {
  const pkgs = missing.map((m) => m.pkg).join(' ');
  const why = missing.map((m) => m.why).join('; ');
  if (process.getuid?.() !== 0) {
    console.error(`${why}. Install with: sudo apt-get update && sudo apt-get install -y ${pkgs}`);
    process.exit(1);
  }
  console.log(`${why}; installing Debian's ${pkgs} for the tests…`);
  execSync(`apt-get update && apt-get install -y ${pkgs}`, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}
