import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { startRelayWithClock, type TestRelay } from '../support/running-relay.js';
import { cardsAskedBy, MCP_TIMING_ENV, mcpClients, type ToolResult } from '../support/mcp-tools.js';
import type { FakeClock } from '../support/fake-clock.js';

// OpenClaw's own ask_user test cases (openclaw/openclaw: src/agents/tools/
// ask-user-tool-normalization.test.ts and ask-user-tool.test.ts, with their fixture), run
// through /mcp/openclaw with the real MCP SDK client: every one must give OpenClaw's result.
// Where OpenClaw's test reads `toThrow(x)` (the message contains x), so does this one.

let relay: TestRelay;
let clock: FakeClock;
const clients = mcpClients('openclaw-fidelity');
beforeAll(async () => {
  ({ relay, clock } = await startRelayWithClock({ ...MCP_TIMING_ENV, ASKRELAY_WAIT: '90m' }));
});
afterEach(() => clients.closeAll());
afterAll(() => relay.stop());

const connect = async () => (await clients.connect(relay.url, relay.token, { path: '/mcp/openclaw' })).client;
const call = (client: Client, args: unknown) => client.callTool({ name: 'ask_user', arguments: args as Record<string, unknown> }) as Promise<ToolResult>;
const nextCard = cardsAskedBy('openclaw', 1500);
const waitSeconds = (card: Card) => (Date.parse(card.expiresAt) - Date.parse(card.createdAt)) / 1000;
const text = (result: ToolResult) => result.content[0].text;

// OpenClaw's validArgs.
const Q0 = {
  id: 'deploy_target',
  header: 'Deployment target',
  question: 'Where should this deploy?',
  options: [{ label: 'Staging (Recommended)', description: 'Safer default' }, { label: 'Production' }],
};
const validArgs = { questions: [Q0] };

/** Asks, then closes the card as `close` says, and returns what the model read. */
async function ask(args: unknown, close: (card: Card) => Promise<unknown>): Promise<{ card: Card; result: ToolResult }> {
  const client = await connect();
  const pending = call(client, args);
  const card = await nextCard(relay.relay);
  await close(card);
  return { card, result: await pending };
}
const cancel = (card: Card) => relay.relay.cancel(card.id);

describe('OpenClaw normalisation tests, through /mcp/openclaw', () => {
  it('normalizes headers, forces free text, and clamps timeout', async () => {
    const low = await ask({ ...validArgs, timeoutSeconds: 5 }, cancel);
    expect(waitSeconds(low.card)).toBe(30);
    expect(low.card.questions[0]).toMatchObject({ id: 'deploy_target', header: 'Deployment t', freeText: true });
    const high = await ask({ ...validArgs, timeoutSeconds: 9_999 }, cancel);
    expect(waitSeconds(high.card)).toBe(3_600);
    const secret = await call(await connect(), { questions: [{ ...Q0, isSecret: true }] });
    expect(secret.isError).toBe(true);
  });

  it('drops the custom answer from a prompt moved to another thread', async () => {
    const client = await connect();
    const pending = call(client, { ...validArgs, threadId: ' 1700000000.000200 ' });
    const card = await nextCard(relay.relay);
    expect(card.questions[0].freeText).toBe(false);
    // A typed answer is refused; a button is taken.
    const typed = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { deploy_target: { selected: [], text: 'Canary' } } } });
    expect(typed.status).toBe(422);
    expect(await typed.json()).toMatchObject({ error: { code: 'free_text_not_allowed' } });
    expect(await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { deploy_target: { selected: ['Production'] } } } })).toHaveProperty('status', 200);
    expect(text(await pending)).toMatch(/^Deployment t: Production\n\n/);
    const { tools } = await client.listTools();
    expect(JSON.stringify(tools[0].inputSchema)).toContain('Typed replies in that thread are not seen');
  });

  it('repeats the structured-choice contract in the model-visible schema', async () => {
    const { tools } = await (await connect()).listTools();
    const schema = JSON.stringify(tools.find((t) => t.name === 'ask_user')!.inputSchema);
    for (const words of ['Put all selectable choices in options', 'Every selectable choice', 'True only when the user may choose several options at once']) {
      expect(schema).toContain(words);
    }
  });

  it.each([
    ['empty questions', { questions: [] }, 'model-facing question contract'],
    ['too many questions', { questions: [Q0, Q0, Q0, Q0] }, 'model-facing question contract'],
    ['too few options', { questions: [{ ...Q0, options: [{ label: 'Only' }] }] }, 'model-facing question contract'],
    ['duplicate ids', { questions: [Q0, Q0] }, "duplicate question id 'deploy_target'"],
    ['invalid id', { questions: [{ ...Q0, id: 'Deploy Target' }] }, 'model-facing question contract'],
    ['blank normalized header', { questions: [{ ...Q0, header: '   ' }] }, 'model-facing display contract'],
    ['long normalized option label', { questions: [{ ...Q0, options: [{ label: 'x'.repeat(65) }, { label: 'Production' }] }] }, 'model-facing display contract'],
    ['duplicate normalized option labels', { questions: [{ ...Q0, options: [{ label: 'Staging' }, { label: ' staging ' }] }] }, 'duplicate option label'],
    ['blank threadId', { ...validArgs, threadId: '   ' }, 'threadId must be a non-empty string'],
    ['several questions with threadId', { questions: [Q0, { ...Q0, id: 'deploy_window' }], threadId: '1700000000.000200' }, 'threadId supports only one single-select question'],
    ['multiSelect with threadId', { questions: [{ ...Q0, multiSelect: true }], threadId: '1700000000.000200' }, 'threadId supports only one single-select question'],
  ])('rejects %s', async (_name, args, message) => {
    const before = (await relay.relay.list()).length;
    const result = await call(await connect(), args);
    expect(result.isError).toBe(true);
    expect(text(result)).toContain(message);
    expect((await relay.relay.list()).length).toBe(before);
  });
});

describe('OpenClaw execution tests, through /mcp/openclaw', () => {
  it('returns answered details plus readable answer lines', async () => {
    const answers = { answers: { deploy_target: ['Staging (Recommended)'] } };
    const { card, result } = await ask(validArgs, (c) =>
      relay.api(`/api/cards/${c.id}/answer`, { method: 'POST', json: { answers: { deploy_target: { selected: ['Staging (Recommended)'] } } } }),
    );
    expect(waitSeconds(card)).toBe(900);
    expect(result.structuredContent).toEqual({ status: 'answered', answers });
    expect(result.content).toEqual([{ type: 'text', text: expect.stringContaining('Deployment t: Staging (Recommended)') }]);
  });

  it.each([
    ['expired', 'No answer arrived'],
    ['cancelled', 'question was cancelled'],
  ])('maps %s to no_answer', async (status, words) => {
    const { result } = await ask({ ...validArgs, timeoutSeconds: 30 }, async (card) => {
      if (status === 'cancelled') return cancel(card);
      clock.advance(30_000);
    });
    expect(text(result)).toContain(words);
    expect(result.structuredContent).toEqual({ status: 'no_answer' });
  });

  it('rejects a second pending question in the same session', async () => {
    const client = await connect();
    const first = call(client, validArgs);
    const card = await nextCard(relay.relay);
    const second = await call(client, { questions: [{ ...Q0, id: 'deploy_window' }] });
    expect(second).toEqual({
      content: [{ type: 'text', text: 'ask_user already has a pending question for this session; wait for it to resolve before asking another' }],
      isError: true,
    });
    await cancel(card);
    expect((await first).structuredContent).toEqual({ status: 'no_answer' });
    // The slot is free again once the first question ended.
    const third = call(client, validArgs);
    await cancel(await nextCard(relay.relay));
    expect((await third).structuredContent).toEqual({ status: 'no_answer' });
  });

  it('claims unmatched plain text as free text', async () => {
    const { result } = await ask(validArgs, (c) => relay.api(`/api/cards/${c.id}/reply`, { method: 'POST', json: { text: 'A custom destination' } }));
    expect(result.structuredContent).toEqual({ status: 'answered', answers: { answers: { deploy_target: ['A custom destination'] } } });
  });

  it('a reply "1" picks the first option', async () => {
    const { result } = await ask(validArgs, (c) => relay.api(`/api/cards/${c.id}/reply`, { method: 'POST', json: { text: '1' } }));
    expect(result.structuredContent).toEqual({ status: 'answered', answers: { answers: { deploy_target: ['Staging (Recommended)'] } } });
  });
});

describe('beyond OpenClaw\'s tests: what its code does', () => {
  it('"Other" is an ordinary option: shown on the card and picked like any other', async () => {
    const args = { questions: [{ ...Q0, options: [{ label: 'Staging' }, { label: 'Other' }] }] };
    const { card, result } = await ask(args, (c) =>
      relay.api(`/api/cards/${c.id}/answer`, { method: 'POST', json: { answers: { deploy_target: { selected: ['Other'] } } } }),
    );
    expect(card.questions[0].options.map((o) => o.label)).toEqual(['Staging', 'Other']);
    expect(result.structuredContent).toEqual({ status: 'answered', answers: { answers: { deploy_target: ['Other'] } } });
  });

  it('another MCP session may ask while the first one waits: the slot is per session', async () => {
    const [a, b] = [await connect(), await connect()];
    const first = call(a, validArgs);
    const one = await nextCard(relay.relay);
    const second = call(b, { questions: [{ ...Q0, id: 'deploy_window' }] });
    const two = await nextCard(relay.relay);
    expect(two.id).not.toBe(one.id);
    await Promise.all([cancel(one), cancel(two)]);
    expect((await first).structuredContent).toEqual({ status: 'no_answer' });
    expect((await second).structuredContent).toEqual({ status: 'no_answer' });
  });

  it('an answered result: a line per question, a blank line, the details as pretty JSON', async () => {
    const window = { ...Q0, id: 'deploy_window', header: 'Window', question: 'When?', options: [{ label: 'Now' }, { label: 'Tonight' }] };
    const { result } = await ask({ questions: [Q0, window] }, (c) =>
      relay.relay.answer(c.id, { deploy_target: { selected: ['Production'] }, deploy_window: { selected: ['Now'] } }),
    );
    expect(text(result)).toBe(
      [
        'Deployment t: Production',
        'Window: Now',
        '',
        '{',
        '  "status": "answered",',
        '  "answers": {',
        '    "answers": {',
        '      "deploy_target": [',
        '        "Production"',
        '      ],',
        '      "deploy_window": [',
        '        "Now"',
        '      ]',
        '    }',
        '  }',
        '}',
      ].join('\n'),
    );
  });
});
