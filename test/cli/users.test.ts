import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// askrelay users, the real command against a real relay: add prints the personal token once,
// list names the people, remove ends the token; a person's token may not run it.

const TOKEN = 'test-token-0123456789abcdef';
let scratch: string;
let relay: TestRelay;
beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'askrelay-users-cli-'));
  relay = await startTestRelay();
});
afterAll(async () => {
  await relay?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const cli = (args: string[], token = TOKEN) => runCli(['users', ...args], { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: token }, scratch);

describe('askrelay users', () => {
  it('adds a person and prints the token once; lists; removes; the removed token stops working', async () => {
    const added = await cli(['add', 'ada']);
    expect(added.code, added.stderr).toBe(0);
    const token = /^(asp_[\w-]{32})$/m.exec(added.stdout)![1];
    expect(added.stdout).toMatch(/^Added ada\. Their personal token \(shown this once; give it to them\):\n/);

    const listed = await cli(['list']);
    expect(listed.stdout).toMatch(/^ada {2}\(added \d{4}-\d\d-\d\dT/m);
    expect(listed.stdout).not.toContain(token);
    expect(JSON.parse((await cli(['list', '--json'])).stdout).users.map((u: { name: string }) => u.name)).toContain('ada');

    // The person's own token may read cards, not manage people.
    expect((await runCli(['cards'], { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: token }, scratch)).code).toBe(0);
    const refused = await cli(['list'], token);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('Only the operator (the relay token) can do this; a personal token cannot.');

    expect(await cli(['link', 'ada', 'telegram:42'])).toMatchObject({ code: 0, stdout: 'Linked telegram:42 to ada: their taps and replies are recorded as ada.\n' });
    expect((await cli(['list'])).stdout).toMatch(/^ada {2}\(added [^;]+; telegram:42\)$/m);
    expect((await cli(['link', 'ada', 'irc:42'])).stderr).toContain('a link is <platform>:<user id>, the platform one of telegram, slack, discord, mattermost');
    expect(await cli(['unlink', 'ada', 'telegram:42'])).toMatchObject({ code: 0, stdout: 'Unlinked telegram:42 from ada.\n' });
    expect(await cli(['remove', 'ada'])).toMatchObject({ code: 0, stdout: 'Removed ada; their token no longer works.\n' });
    expect((await runCli(['cards'], { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: token }, scratch)).code).toBe(1);
  });

  it('says what is wrong: a taken or bad name, an unknown person or action, missing arguments', async () => {
    await cli(['add', 'bea']);
    expect((await cli(['add', 'bea'])).stderr).toContain('There is already a person called "bea".');
    expect((await cli(['add', 'Bea'])).stderr).toContain('a name is 1-32 lowercase letters, digits, _ or -, starting with a letter');
    expect((await cli(['remove', 'nobody'])).stderr).toContain('No person called "nobody".');
    for (const [args, text] of [
      [['add'], 'give the name'],
      [['promote', 'bea'], 'unknown action "promote"'],
      [['link', 'bea'], 'give the person and the chat user'],
    ] as const) {
      const run = await cli([...args]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(text);
    }
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: askrelay users add <name>');
  });

  it("a person's token running the operator's reading commands (audit, audit verify, nodes, channels) is told so, exit 1", async () => {
    const added = await cli(['add', 'cal']);
    const token = /^(asp_[\w-]{32})$/m.exec(added.stdout)![1];
    for (const args of [['audit'], ['audit', 'verify'], ['nodes'], ['channels']]) {
      const run = await runCli(args, { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: token }, scratch);
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stdout, args.join(' ')).toBe('');
      expect(run.stderr, args.join(' ')).toBe(`askrelay ${args[0]}: Only the operator (the relay token) can do this; a personal token cannot.\n`);
      expect((await runCli(args, { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: TOKEN }, scratch)).code, args.join(' ')).toBe(0);
    }
    // The head names no card: a person may pin it.
    expect((await runCli(['audit', 'head'], { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: token }, scratch)).code).toBe(0);
  });
});
