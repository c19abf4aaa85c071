import { existsSync } from 'node:fs';

// A test that times out, or a test worker that is killed, never runs its clean-up: the relay
// nodes and the load balancer it started would live on, holding ports and a database. Where
// util-linux's setpriv is there (Debian has it), each child is started through it with a
// parent-death signal: setpriv execs the command (same pid), and the kernel kills it when
// the test worker that started it goes away.

const SETPRIV = '/usr/bin/setpriv';
const guarded = existsSync(SETPRIV);

/** The command and arguments that start `command` so that it dies with this process. */
export function diesWithTest(command: string, args: string[]): [string, string[]] {
  return guarded ? [SETPRIV, ['--pdeathsig', 'SIGKILL', '--', command, ...args]] : [command, args];
}
