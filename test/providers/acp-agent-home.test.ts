import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

// The private HOME an agent CLI gets under the shared temporary folder
// (src/acp/agent-home.ts): each level made 0700; a level that exists already and belongs to
// another user, or that other users can reach, or that is a link, refuses the session with a
// sentence; removal never goes through a level that is not this user's own. The temporary
// folder is this file's own (TMPDIR, read by os.tmpdir() at each call; each test file runs in
// a process of its own), so nothing here touches another test's folders.

const scratch = mkdtempSync(join(tmpdir(), 'askrelay-agent-home-'));
const before = process.env.TMPDIR;
let home: typeof import('../../src/acp/agent-home.js');
let uid: number;
let n = 0;

beforeAll(async () => {
  home = await import('../../src/acp/agent-home.js');
  uid = process.getuid!();
});
afterAll(() => {
  if (before === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = before;
  rmSync(scratch, { recursive: true, force: true });
});

/** A fresh temporary folder for the next test, as TMPDIR. */
function freshTmp(): string {
  const tmp = join(scratch, `tmp-${++n}`);
  mkdirSync(tmp);
  process.env.TMPDIR = tmp;
  return tmp;
}
afterEach(() => {
  process.umask(0o022);
});

const mode = (path: string) => lstatSync(path).mode & 0o777;
const NOBODY = 65534;

describe('an agent home under the temporary folder', () => {
  it('is made level by level, each 0700 whatever the umask', () => {
    const tmp = freshTmp();
    process.umask(0);
    const path = home.makeAgentHome('gemini', 's_one', 'Gemini CLI');
    expect(path).toBe(join(tmp, `askrelay-${uid}`, 'gemini', 's_one'));
    for (const level of [join(tmp, `askrelay-${uid}`), join(tmp, `askrelay-${uid}`, 'gemini'), path]) expect(mode(level), level).toBe(0o700);
    // Made again (a resumed session): the same folder, still fine.
    expect(home.makeAgentHome('gemini', 's_one', 'Gemini CLI')).toBe(path);
  });

  it('refuses a level that exists with a mode other users can reach, and leaves it as it was', () => {
    const tmp = freshTmp();
    const root = join(tmp, `askrelay-${uid}`);
    mkdirSync(root);
    chmodSync(root, 0o777);
    expect(() => home.makeAgentHome('gemini', 's_two', 'Gemini CLI')).toThrow(
      `askrelay will not keep Gemini CLI's private HOME in ${root}: other users can reach it (mode 0777; it must be 0700). Remove that folder (or point TMPDIR elsewhere) and start the session again.`,
    );
    expect(mode(root)).toBe(0o777);
    expect(existsSync(join(root, 'gemini'))).toBe(false);

    // A session's own folder made group-writable is refused just the same.
    chmodSync(root, 0o700);
    const own = join(root, 'gemini', 's_two');
    mkdirSync(own, { recursive: true, mode: 0o700 });
    chmodSync(own, 0o770);
    expect(() => home.makeAgentHome('gemini', 's_two', 'Gemini CLI')).toThrow(`in ${own}: other users can reach it (mode 0770; it must be 0700)`);
  });

  it('refuses a level that belongs to another user (nobody), 0700 or not', () => {
    const tmp = freshTmp();
    const agent = join(tmp, `askrelay-${uid}`, 'gemini');
    mkdirSync(agent, { recursive: true, mode: 0o700 });
    chownSync(agent, NOBODY, NOBODY);
    expect(() => home.makeAgentHome('gemini', 's_three', 'Gemini CLI')).toThrow(
      `askrelay will not keep Gemini CLI's private HOME in ${agent}: it belongs to another user (uid ${NOBODY}, this relay runs as ${uid}).`,
    );
    expect(existsSync(join(agent, 's_three'))).toBe(false);
  });

  it('refuses a level that is a symbolic link, even to a private folder of its own', () => {
    const tmp = freshTmp();
    const elsewhere = join(tmp, 'elsewhere');
    mkdirSync(elsewhere, { mode: 0o700 });
    symlinkSync(elsewhere, join(tmp, `askrelay-${uid}`));
    expect(() => home.makeAgentHome('codex', 's_four', 'Codex')).toThrow(`askrelay will not keep Codex's private HOME in ${join(tmp, `askrelay-${uid}`)}: it is a symbolic link.`);
  });

  it('is removed with what it holds; never through a level that is not this user\'s own', () => {
    const tmp = freshTmp();
    const path = home.makeAgentHome('gemini', 's_five', 'Gemini CLI');
    mkdirSync(join(path, '.gemini'));
    writeFileSync(join(path, '.gemini', 'settings.json'), '{"token": "dead"}');
    home.removeAgentHome('gemini', 's_five');
    expect(existsSync(path)).toBe(false);
    expect(existsSync(join(tmp, `askrelay-${uid}`, 'gemini'))).toBe(true);
    home.removeAgentHome('gemini', 's_five'); // gone already: nothing to do

    // Someone else's folder in the way (here: the agent level handed to nobody): left alone.
    const kept = home.makeAgentHome('gemini', 's_six', 'Gemini CLI');
    chownSync(join(tmp, `askrelay-${uid}`, 'gemini'), NOBODY, NOBODY);
    home.removeAgentHome('gemini', 's_six');
    expect(existsSync(kept)).toBe(true);
  });
});
