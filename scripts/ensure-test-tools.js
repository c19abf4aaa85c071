#!/usr/bin/env node
// The browser tests drive Debian's Chromium, the terminal UI tests drive `askrelay tui`
// inside tmux, and the cluster tests put Debian's HAProxy in front of several relay nodes.
// When one is missing, install it (as root, from Debian's packages) rather than skip those
// tests; elsewhere say exactly what to run and stop.
import { execFileSync, execSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// The browser tests read CHROMIUM_PATH (test/browser/chromium.ts), the cluster tests
// HAPROXY_PATH (test/support/load-balancer.ts).
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const HAPROXY = process.env.HAPROXY_PATH ?? '/usr/sbin/haproxy';

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
if (!existsSync(HAPROXY)) missing.push({ pkg: 'haproxy', why: `HAProxy is missing at ${HAPROXY} (cluster tests)` });

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

// The store tests run against a real PostgreSQL (ASKRELAY_TEST_DATABASE_URL, by default
// postgres://postgres@127.0.0.1:5432/test). When none answers there, install and start
// Debian's postgresql (as root) with trust authentication on loopback, as the CI machines
// have it, and make the database; elsewhere say what to run.
const { default: pg } = await import('pg');
const TEST_DATABASE_URL = process.env.ASKRELAY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

async function postgresAnswers() {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

if (!(await postgresAnswers())) {
  const why = `No PostgreSQL answers at ${TEST_DATABASE_URL} (store tests)`;
  if (process.getuid?.() !== 0) {
    console.error(`${why}. Install and start one (Debian: sudo apt-get install -y postgresql), or point ASKRELAY_TEST_DATABASE_URL at one.`);
    process.exit(1);
  }
  console.log(`${why}; installing and starting Debian's postgresql for the tests…`);
  const sh = (command) => execSync(command, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (!existsSync('/etc/postgresql')) sh('apt-get update && apt-get install -y postgresql');
  const version = execSync('ls /etc/postgresql', { encoding: 'utf8' }).trim().split('\n')[0];
  const hba = `/etc/postgresql/${version}/main/pg_hba.conf`;
  // Trust on loopback only, the way the CI machines run it: the tests connect as postgres without a password.
  sh(`grep -q '^host all all 127.0.0.1/32 trust' ${hba} || sed -i '1i host all all 127.0.0.1/32 trust\\nhost all all ::1/128 trust\\nlocal all all trust' ${hba}`);
  sh(`pg_ctlcluster --skip-systemctl-redirect ${version} main start || pg_ctlcluster --skip-systemctl-redirect ${version} main reload`);
  const database = new URL(TEST_DATABASE_URL).pathname.slice(1) || 'test';
  sh(`su postgres -c "psql -tc \\"SELECT 1 FROM pg_database WHERE datname = '${database}'\\" | grep -q 1 || createdb ${database}"`);
  if (!(await postgresAnswers())) {
    console.error(`${why}, and starting Debian's postgresql did not help; see the lines above.`);
    process.exit(1);
  }
}
