import { chmodSync, lstatSync, mkdirSync, rmSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A session's private HOME for an agent CLI (Gemini CLI, Codex): <tmp>/askrelay-<uid>/<agent>/<session
// id>. The temporary folder is shared by every user of the machine, so another user could make
// these folders first (a world-writable one, or one of theirs that they read, where the
// settings hold the session's MCP token). Each level is made 0700 by this process, and one
// that exists already is used only when it is a real folder (no symbolic link) of this user
// that no other user can reach; anything else refuses the session with a sentence saying what.

/** The folder all agents' homes of this user live in. */
export const agentHomesRoot = () => join(tmpdir(), `askrelay-${process.getuid?.() ?? 'user'}`);

/** A session's home for `agent` ("gemini", "codex"). */
export const agentHomePath = (agent: string, sessionId: string) => join(agentHomesRoot(), agent, sessionId);

/** Why a folder that exists may not hold an agent's home (pure); undefined when it may. */
export function unsafeHome(stat: Pick<Stats, 'isDirectory' | 'isSymbolicLink' | 'uid' | 'mode'>, uid: number | undefined): string | undefined {
  if (stat.isSymbolicLink()) return 'it is a symbolic link';
  if (!stat.isDirectory()) return 'it is not a folder';
  if (uid !== undefined && stat.uid !== uid) return `it belongs to another user (uid ${stat.uid}, this relay runs as ${uid})`;
  const mode = stat.mode & 0o777;
  if (mode & 0o077) return `other users can reach it (mode ${mode.toString(8).padStart(4, '0')}; it must be 0700)`;
  return undefined;
}

const uid = () => process.getuid?.();

/** Makes `path` (its parent exists and was checked) as a 0700 folder, or checks the one there. */
function privateFolder(path: string, what: string): void {
  try {
    mkdirSync(path, { mode: 0o700 });
    // The umask can only take bits away; chmod says exactly 0700 whatever it is.
    chmodSync(path, 0o700);
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const why = unsafeHome(lstatSync(path), uid());
  if (why) {
    throw new Error(`askrelay will not keep ${what}'s private HOME in ${path}: ${why}. Remove that folder (or point TMPDIR elsewhere) and start the session again.`);
  }
}

/** The levels from the root down to the session's home. */
const levels = (agent: string, sessionId: string) => [agentHomesRoot(), join(agentHomesRoot(), agent), agentHomePath(agent, sessionId)];

/** The session's home, made (or found safe) level by level; throws the sentence when a level is not safe. `what`: the agent's name. */
export function makeAgentHome(agent: string, sessionId: string, what: string): string {
  for (const path of levels(agent, sessionId)) privateFolder(path, what);
  return agentHomePath(agent, sessionId);
}

/**
 * Removes the session's home (its settings hold the session's MCP token, dead once the
 * session ends). Only through levels that are this user's own private folders: never
 * through a link someone else made.
 */
export function removeAgentHome(agent: string, sessionId: string): void {
  for (const path of levels(agent, sessionId)) {
    let stat: Stats;
    try {
      stat = lstatSync(path);
    } catch {
      return; // nothing there
    }
    if (unsafeHome(stat, uid())) return;
  }
  rmSync(agentHomePath(agent, sessionId), { recursive: true, force: true });
}
