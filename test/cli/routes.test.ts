import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// askrelay routes, the real command against a real relay: check reads a file here (naming
// the rule and field of a mistake), set replaces the relay's routes, show prints them; a
// person's token may not run it.

const TOKEN = 'test-token-0123456789abcdef';
let scratch: string;
let relay: TestRelay;
let adaToken: string;
beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'askrelay-routes-cli-'));
  relay = await startTestRelay();
  adaToken = ((await (await relay.api('/api/users', { method: 'POST', json: { name: 'ada' } })).json()) as { token: string }).token;
});
afterAll(async () => {
  await relay?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const cli = (args: string[], token = TOKEN) => runCli(['routes', ...args], { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: token }, scratch);
const file = (name: string, value: unknown) => {
  const path = join(scratch, name);
  writeFileSync(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
};

const ROUTES = [
  { name: 'payments', match: { labels: { team: 'payments' }, provider: ['claude', 'copilot'] }, to: ['ada', 'telegram:-100'], restrict: true, escalate: [{ after: '15m', to: ['everyone'] }], onExpiry: { answer: 'No' } },
  { name: 'rest', to: ['everyone'] },
];

describe('askrelay routes', () => {
  it('check names the rule and field of a mistake, or counts the rules', async () => {
    const bad = await cli(['check', file('bad.json', [{ name: 'pay', to: ['Ada'] }])]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('bad.json: rule 1 (pay): to[0]: a target is a person\'s name, "everyone", or a chat channel');
    const broken = await cli(['check', file('broken.json', '[{')]);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('broken.json: not valid JSON');
    const good = await cli(['check', file('good.json', { routes: ROUTES })]);
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toBe(`${join(scratch, 'good.json')}: 2 rules, all valid.\n`);
  });

  it('set replaces the relay\'s routes and show prints them; the relay\'s refusal is said', async () => {
    expect((await cli([])).stdout).toContain('No routes: every card goes to everyone.');
    const set = await cli(['set', file('routes.json', ROUTES)]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe('The relay routes by 2 rules now.\n');
    const shown = await cli(['show']);
    expect(shown.stdout).toBe(
      [
        '1. payments: provider=claude|copilot team=payments → ada, telegram:-100 (only them)',
        '   after 15m: also everyone',
        '   at expiry: answered "No"',
        '2. rest: every card → everyone',
        '',
      ].join('\n'),
    );
    expect(JSON.parse((await cli(['--json'])).stdout).routes.map((r: { name: string }) => r.name)).toEqual(['payments', 'rest']);

    const unknown = await cli(['set', file('typo.json', [{ name: 'x', to: ['dan'] }])]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('rule 1 (x): to: there is no person called "dan" (askrelay users add dan).');
    const refused = await cli(['show'], adaToken);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('operator');
    expect((await cli(['frobnicate'])).stderr).toContain('unknown action "frobnicate": show, set or check.');
  });
});
