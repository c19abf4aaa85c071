import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { cardsAskedBy, mcpClients, type ToolResult } from '../support/mcp-tools.js';

// Plain-text replies to a card asked through /mcp/openclaw, read as OpenClaw's bridge reads
// them (openclaw/openclaw src/agents/harness/user-input-bridge.ts and its tests, and the
// harness runtime's): asked with the real MCP SDK client, replied through
// POST /api/cards/:id/reply, and checked in what the agent reads back.
//
// OpenClaw's bridge tests ask questions without options, which its ask_user never sends (it
// takes 2-4); here each question has two options the replies do not name, so the replies are
// read exactly as there: as free text.

let relay: TestRelay;
const clients = mcpClients('openclaw-replies');
beforeAll(async () => {
  relay = await startTestRelay({ ASKRELAY_WAIT: '90m' });
});
afterEach(() => clients.closeAll());
afterAll(() => relay.stop());
const nextCard = cardsAskedBy('openclaw', 1500);

type Q = { id: string; header: string; question: string; options: { label: string }[]; multiSelect?: boolean };
const labels = (...l: string[]) => l.map((label) => ({ label }));
/** Question i of OpenClaw's bridge tests. */
const q = (i: number): Q => ({ id: `q${i}`, header: `Question ${i}`, question: `What is answer ${i}?`, options: labels('Yes', 'No') });

/** Asks `questions`, replies `text`, and returns the answers the agent reads. */
async function replied(questions: Q[], text: string): Promise<Record<string, string[]>> {
  const { client } = await clients.connect(relay.url, relay.token, { path: '/mcp/openclaw' });
  const pending = client.callTool({ name: 'ask_user', arguments: { questions } }) as Promise<ToolResult>;
  const card = await nextCard(relay.relay);
  const res = await relay.api(`/api/cards/${card.id}/reply`, { method: 'POST', json: { text } });
  expect(res.status).toBe(200);
  const result = await pending;
  expect(result.structuredContent?.status).toBe('answered');
  return (result.structuredContent as { answers: { answers: Record<string, string[]> } }).answers.answers;
}

describe("OpenClaw's bridge tests", () => {
  it.each<[string, Q[], string, Record<string, string[]>]>([
    ['colon keys', [q(1), q(2)], 'q1: hello\nq2: world', { q1: ['hello'], q2: ['world'] }],
    ['equals keys', [q(1), q(2)], 'q1 = alpha\nq2 = beta', { q1: ['alpha'], q2: ['beta'] }],
    ['dash keys', [q(1), q(2)], 'q1 - first\nq2 - second', { q1: ['first'], q2: ['second'] }],
    ['number keys', [q(1), q(2)], '1: alpha\n2: beta', { q1: ['alpha'], q2: ['beta'] }],
    ['URLs in values', [q(1), q(2), q(3)], 'q1: see https://example.com/path\nq2: normal\nq3: also http://test.com', {
      q1: ['see https://example.com/path'],
      q2: ['normal'],
      q3: ['also http://test.com'],
    }],
    ['a Windows path in a value', [q(1), q(2)], 'q1: file at C:\\Users\\foo\\bar.txt\nq2: normal', { q1: ['file at C:\\Users\\foo\\bar.txt'], q2: ['normal'] }],
    ['a time in a value', [q(1), q(2)], 'q1: meet at 14:30 tomorrow\nq2: done', { q1: ['meet at 14:30 tomorrow'], q2: ['done'] }],
    ['a leading time, then a keyed line', [q(1), q(2)], '14:30\nq2: real answer', { q1: ['14:30'], q2: ['real answer'] }],
    ['a leading date, then a keyed line', [q(1), q(2)], '2026-07-08\nq2: real answer', { q1: ['2026-07-08'], q2: ['real answer'] }],
    ['one question, one line', [q(1)], 'my answer here', { q1: ['my answer here'] }],
    ['an empty reply', [q(1), q(2)], '', { q1: [], q2: [] }],
    ['lines in order', [q(1), q(2)], 'alpha\nbeta', { q1: ['alpha'], q2: ['beta'] }],
  ])('%s', async (_name, questions, text, answers) => {
    expect(await replied(questions, text)).toEqual(answers);
  });
});

describe("OpenClaw's harness runtime tests", () => {
  it('keeps blank lines so skipped answers stay aligned', async () => {
    const three = [1, 2, 3].map((i) => ({ ...q(i), header: `Q${i}` }));
    expect(await replied(three, '\nyes\nno')).toEqual({ q1: [], q2: ['Yes'], q3: ['No'] });
  });

  it('normalizes keyed multi-question answers with option indexes', async () => {
    const questions = [
      { id: 'repo', header: 'Repository', question: 'Which repo?', options: labels('askrelay', 'openclaw') },
      { id: 'mode', header: 'Mode', question: 'Which mode?', options: labels('Fast', 'Deep') },
    ];
    expect(await replied(questions, 'repo: openclaw\nmode: 2')).toEqual({ repo: ['openclaw'], mode: ['Deep'] });
  });

  it('keeps a comma-containing option label as one multi-select answer', async () => {
    const region = { id: 'region', header: 'Region', question: 'Which region should deploy?', multiSelect: true, options: labels('Frankfurt, Germany', 'Dublin, Ireland') };
    expect(await replied([region], 'Frankfurt, Germany')).toEqual({ region: ['Frankfurt, Germany'] });
  });
});

// Further cases computed from OpenClaw's code (not its tests): its rules where askrelay's own differ.
describe("what OpenClaw's bridge code does", () => {
  const target = { id: 'deploy_target', header: 'Deployment t', question: 'Where should this deploy?', options: labels('Staging (Recommended)', 'Production') };
  const window = { id: 'deploy_window', header: 'Window', question: 'When?', options: labels('Now', 'Tonight') };
  const count = { id: 'count', header: 'Count', question: 'How many?', options: labels('3', '1') };
  const regions = { id: 'regions', header: 'Regions', question: 'Which regions?', multiSelect: true, options: labels('EU', 'US', 'APAC') };
  it.each<[string, Q[], string, Record<string, string[]>]>([
    ['a number picks that option', [target], '2', { deploy_target: ['Production'] }],
    ['a label in any case', [target], '  production ', { deploy_target: ['Production'] }],
    ['a number past the options is free text', [target], '7', { deploy_target: ['7'] }],
    ['a single-choice list is one free text', [target], '1, 2', { deploy_target: ['1, 2'] }],
    ['"Other" is free text', [target], 'Other', { deploy_target: ['Other'] }],
    ['a number names a place before a numeric label', [count], '1', { count: ['3'] }],
    ['a numeric label past the places', [count], '3', { count: ['3'] }],
    ['multi-select numbers', [regions], '1, 3', { regions: ['EU', 'APAC'] }],
    ['multi-select repeats count once', [regions], '1,EU,eu', { regions: ['EU'] }],
    ['multi-select free text after the picks', [regions], 'EU, Mars', { regions: ['EU', 'Mars'] }],
    ['keys by id, in any order', [target, window], 'deploy_window: 1\ndeploy_target: production', { deploy_target: ['Production'], deploy_window: ['Now'] }],
    ['keys by header', [target, window], 'Deployment t: 2\nwindow: now', { deploy_target: ['Production'], deploy_window: ['Now'] }],
    ['keys by question text', [target, window], 'Where should this deploy?: 1\nWhen?: 2', { deploy_target: ['Staging (Recommended)'], deploy_window: ['Tonight'] }],
    ['a leading unkeyed line, then a keyed one', [target, window], 'Production\ndeploy_window: 1', { deploy_target: ['Production'], deploy_window: ['Now'] }],
    ['a missing line leaves its question empty', [target, window], 'Production', { deploy_target: ['Production'], deploy_window: [] }],
    ['a blank first line leaves the first empty', [target, window], '\nTonight', { deploy_target: [], deploy_window: ['Tonight'] }],
    ['a line keyed for another question is still this one\'s line', [target, window], 'deploy_window: Tonight', { deploy_target: ['deploy_window: Tonight'], deploy_window: ['Tonight'] }],
    ['the last of two lines with one key wins', [target, window], 'deploy_target: 1\ndeploy_target: 2\nfoo', { deploy_target: ['Production'], deploy_window: ['deploy_target: 2'] }],
  ])('%s', async (_name, questions, text, answers) => {
    expect(await replied(questions, text)).toEqual(answers);
  });

  it('an empty reply reads "(no answer)" for each question', async () => {
    const { client } = await clients.connect(relay.url, relay.token, { path: '/mcp/openclaw' });
    const pending = client.callTool({ name: 'ask_user', arguments: { questions: [target, window] } }) as Promise<ToolResult>;
    const card = await nextCard(relay.relay);
    await relay.api(`/api/cards/${card.id}/reply`, { method: 'POST', json: { text: '' } });
    expect((await pending).content[0].text).toBe(
      'Deployment t: (no answer)\nWindow: (no answer)\n\n{\n  "status": "answered",\n  "answers": {\n    "answers": {\n      "deploy_target": [],\n      "deploy_window": []\n    }\n  }\n}',
    );
  });
});
