import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { runCli } from '../support/cli.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// Labels (docs/routing.md): what a card or session carries for routing. Asked with a card
// (POST /api/cards, askrelay ask --label), checked with a sentence naming the label.

let relay: TestRelay;
let scratch: string;
beforeAll(async () => {
  relay = await startTestRelay({ ASKRELAY_WAIT: '1h' });
  scratch = mkdtempSync(join(tmpdir(), 'askrelay-labels-'));
});
afterAll(async () => {
  await relay?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const ask = (body: Record<string, unknown>) => relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Deploy?', options: ['Yes', 'No'] }], ...body } });

describe('labels on cards', () => {
  it('a card keeps the labels it was asked with; none leaves it without', async () => {
    const labelled = (await (await ask({ labels: { team: 'payments', env: 'prod' } })).json()) as Card;
    expect(labelled.labels).toEqual({ team: 'payments', env: 'prod' });
    expect(((await (await relay.api(`/api/cards/${labelled.id}`)).json()) as Card).labels).toEqual({ team: 'payments', env: 'prod' });
    expect('labels' in ((await (await ask({})).json()) as Card)).toBe(false);
  });

  it('refuses a bad label with a sentence naming it', async () => {
    for (const [labels, message] of [
      [{ Team: 'x' }, 'labels.Team: a label key is 1-32 lowercase letters, digits, _, - or ., starting with a letter'],
      [{ team: '' }, 'labels.team: a label value is empty'],
      [Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])), 'labels: at most 16 labels'],
    ] as const) {
      const res = await ask({ labels });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe(message);
    }
  });

  it('a session refuses a bad label too', async () => {
    const res = await relay.api('/api/sessions', { method: 'POST', json: { provider: 'claude', prompt: 'Hi', labels: { Team: 'x' } } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('labels.Team: a label key is 1-32 lowercase letters, digits, _, - or ., starting with a letter');
  });

  it('askrelay ask --label team=payments asks a labelled card; a label without = is refused', async () => {
    const env = { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: relay.token };
    const run = await runCli(['ask', 'Deploy?', '--label', 'team=payments', '--label', 'env=prod', '--wait', '300ms', '--json'], env, scratch);
    expect(run.code).toBe(2); // nobody answered in 300 ms
    expect((JSON.parse(run.stdout) as Card).labels).toEqual({ team: 'payments', env: 'prod' });
    const bad = await runCli(['ask', 'Deploy?', '--label', 'team'], env, scratch);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--label takes key=value, e.g. --label team=payments (got "team").');
  });
});
