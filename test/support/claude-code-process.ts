import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';

// The Claude Code processes this test process started (the SDK spawns the bundled `claude`
// binary as a child), found through /proc: Linux only, as the test machines are. A test tells
// its session's process from the others by the folder it runs in (ASKRELAY_WORKDIR).

/** Pids of the `claude` children of this process that run in `cwd`. */
export function claudeCodeProcesses(cwd: string): number[] {
  const pids: number[] = [];
  const folder = realpathSync(cwd);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[0] ?? '';
      if (!/claude-agent-sdk[^/]*\/claude$/.test(command)) continue;
      if (readlinkSync(`/proc/${entry}/cwd`) === folder) pids.push(Number(entry));
    } catch {
      // the process ended while it was being read
    }
  }
  return pids;
}
