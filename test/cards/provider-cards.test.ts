import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NO_QUESTION_TEXT, toCardDraft as claudeDraft, toUpdatedInput } from '../../providers/claude/adapter.js';
import type { AskUserQuestionInput } from '../../providers/claude/tool.js';
import { classicCardDraft, classicResponse } from '../../providers/copilot/adapter.js';
import { formCardDraft, formResult, type ElicitationRequest } from '../../src/cards/elicitation-form.js';
import { COPILOT_FORM } from '../../providers/copilot/tool.js';
import { LIMITS, type Answer, type Card, type CardDraft } from '../../src/cards/model.js';
import { mcpClients, type ToolResult } from '../support/mcp-tools.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// Issue 13, items 8 and 13, on the paths where a provider builds the card. Provider-owned
// tools (Claude's AskUserQuestion, Copilot's built-in ask_user and its form) are shaped, not
// refused: ids every object has are renamed, long texts cut, invisible labels named by their
// place, and the answer still goes back in the provider's own spelling. askrelay's own
// dialects over MCP (Cursor, OpenClaw) refuse such input with a readable tool error.

let relay: TestRelay;
const clients = mcpClients('provider-cards-test');

beforeAll(async () => {
  relay = await startTestRelay({ ASKRELAY_WAIT: '90m' });
});
afterEach(() => clients.closeAll());
afterAll(() => relay.stop());

/** The card a runner's ctx.ask would open, answered over HTTP as the human. */
async function askAndAnswer(draft: CardDraft, answers: (card: Card) => Answer): Promise<Card> {
  const card = await relay.relay.create(draft);
  const res = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: answers(card) } });
  expect(res.status).toBe(200);
  return (await res.json()) as Card;
}

describe("Copilot's form (provider-owned)", () => {
  // As the runtime hands it over: parsed JSON, so "__proto__" is an own property.
  const request = JSON.parse(
    JSON.stringify({
      message: `Fill in the release. ${'m'.repeat(60_000)}`,
      requestedSchema: { properties: { PROTO: { type: 'string' }, constructor: { type: 'string', title: 'Ctor' }, toString: { type: 'boolean' }, hasOwnProperty: { type: 'number' } } },
    }).replace('"PROTO"', '"__proto__"'),
  ) as ElicitationRequest;

  it('renames fields named like what every object has, cuts the message, and answers under the runtime names', async () => {
    expect(Object.keys(request.requestedSchema!.properties!)).toEqual(['__proto__', 'constructor', 'toString', 'hasOwnProperty']);
    const draft = formCardDraft(request, COPILOT_FORM);
    expect(draft.title).toHaveLength(LIMITS.titleChars);
    expect(draft.questions.map((q) => q.id)).toEqual(['field1', 'field2', 'field3', 'field4']);
    const card = await askAndAnswer(draft, () => ({
      field1: { selected: [], text: 'v1.2' },
      field2: { selected: [], text: 'by hand' },
      field3: { selected: ['Yes'] },
      field4: { selected: [], text: '3' },
    }));
    const result = formResult(request, card);
    expect(result.action).toBe('accept');
    const content = (result as { content: Record<string, unknown> }).content;
    expect(Object.getPrototypeOf(content)).toBe(Object.prototype);
    expect(Object.keys(content)).toEqual(['__proto__', 'constructor', 'toString', 'hasOwnProperty']);
    expect(JSON.stringify(content)).toBe('{"__proto__":"v1.2","constructor":"by hand","toString":true,"hasOwnProperty":3}');
  });

  it('shapes long and invisible choices and maps the picked one back to its value', async () => {
    const long = `${'c'.repeat(300)}-long`;
    const form: ElicitationRequest = { message: 'Pick', requestedSchema: { properties: { env: { type: 'string', enum: ['\u200b', long, 'prod'] } } } };
    const draft = formCardDraft(form, COPILOT_FORM);
    const labels = draft.questions[0].options as string[];
    expect(labels).toEqual(['Option 1', `${'c'.repeat(LIMITS.labelChars - 1)}…`, 'prod']);
    const card = await askAndAnswer(draft, () => ({ env: { selected: [labels[1]] } }));
    expect(formResult(form, card)).toEqual({ action: 'accept', content: { env: long } });
    const blank = await askAndAnswer(formCardDraft(form, COPILOT_FORM), () => ({ env: { selected: ['Option 1'] } }));
    expect(formResult(form, blank)).toEqual({ action: 'accept', content: { env: '\u200b' } });
  });
});

describe("Copilot's built-in ask_user (provider-owned)", () => {
  it('cuts long choices, names invisible ones, keeps at most the card limit, and answers with the choice itself', async () => {
    const long = `${'d'.repeat(250)} end`;
    const request = { question: `${'q'.repeat(LIMITS.textChars + 10)}?`, choices: [long, '\u2066\u2069', 'Yes', 'yes', ...Array.from({ length: 30 }, (_, i) => `c${i}`)] };
    const draft = classicCardDraft(request);
    const q = draft.questions[0];
    expect(q.text).toHaveLength(LIMITS.textChars);
    expect(q.options).toHaveLength(LIMITS.options);
    expect((q.options as string[]).slice(0, 4)).toEqual([`${'d'.repeat(LIMITS.labelChars - 1)}…`, 'Option 2', 'Yes', 'yes (2)']);
    const card = await askAndAnswer(draft, (c) => ({ q1: { selected: [c.questions[0].options[0].label] } }));
    expect(classicResponse(card, request)).toEqual({ answer: long, wasFreeform: false });
    const blank = await askAndAnswer(classicCardDraft(request), () => ({ q1: { selected: ['Option 2'] } }));
    expect(classicResponse(blank, request)).toEqual({ answer: '\u2066\u2069', wasFreeform: false });
  });
});

describe("Claude's AskUserQuestion (provider-owned)", () => {
  it('names an invisible label by its place and shows an invisible question, answering in the model spelling', async () => {
    const input = { questions: [{ question: '\u200b', header: '\u200e', options: [{ label: '\u200b', description: 'zero width' }, { label: 'Plain', description: 'p' }], multiSelect: false }] };
    const parsed = claudeDraft(input);
    expect(parsed.ok).toBe(true);
    const { draft, input: valid } = parsed as { ok: true; draft: CardDraft; input: AskUserQuestionInput };
    const card = await askAndAnswer(draft, () => ({ q1: { selected: ['Option 1'] } }));
    expect(card.questions[0]).toMatchObject({ text: NO_QUESTION_TEXT, options: [{ label: 'Option 1' }, { label: 'Plain' }] });
    expect(card.questions[0].header).toBeUndefined();
    expect(toUpdatedInput(valid, card)).toMatchObject({ answers: { '\u200b': '\u200b' } });
  });
});

async function callAskUser(path: '/mcp' | '/mcp/openclaw', args: unknown): Promise<ToolResult> {
  const { client } = await clients.connect(relay.url, relay.token, { path });
  return (await client.callTool({ name: 'ask_user', arguments: args as Record<string, unknown> })) as ToolResult;
}

describe("askrelay's own dialects over MCP refuse with a readable tool error", () => {
  const pending = async () => (await relay.relay.list({ status: 'pending' })).length;

  it('OpenClaw: a question id "constructor"', async () => {
    const before = await pending();
    const result = await callAskUser('/mcp/openclaw', {
      questions: [{ id: 'constructor', header: 'Build', question: 'Which build?', options: [{ label: 'Debug' }, { label: 'Release' }] }],
    });
    expect(result).toEqual({ isError: true, content: [{ type: 'text', text: 'questions[0].id "constructor" is reserved (every JavaScript object has it); choose another id.' }] });
    expect(await pending()).toBe(before);
  });

  it.each([
    [
      '/mcp/openclaw',
      { questions: [{ id: 'build', header: 'Build', question: 'Which build?', options: [{ label: 'Debug' }, { label: '\u200b\u200d' }] }] },
      // OpenClaw's sentence for a label blank once trimmed, then the field.
      'ask_user questions do not match the required question format: questions[0].options[1].label shows nothing.',
    ],
    [
      '/mcp',
      { questions: [{ question: 'Which build?', options: [{ label: 'Debug' }, { label: '\u2066\u2069' }] }] },
      'questions[0].options[1].label shows nothing: it holds only invisible characters.',
    ],
  ] as const)('%s: a label that shows nothing', async (path, args, text) => {
    const before = await pending();
    expect(await callAskUser(path, args)).toEqual({ isError: true, content: [{ type: 'text', text }] });
    expect(await pending()).toBe(before);
  });
});

describe("Claude's answers keyed by question text", () => {
  it.each(['__proto__', 'constructor', 'toString'])('keep a question whose text is %j as an own key', async (text) => {
    const input = { questions: [{ question: text, header: 'Odd', options: [{ label: 'A', description: 'a' }, { label: 'B', description: 'b' }], multiSelect: false }] };
    const parsed = claudeDraft(input) as { ok: true; draft: CardDraft; input: AskUserQuestionInput };
    const card = await askAndAnswer(parsed.draft, () => ({ q1: { selected: ['B'] } }));
    const answers = toUpdatedInput(parsed.input, card).answers as Record<string, string>;
    expect(Object.getPrototypeOf(answers)).toBe(Object.prototype);
    expect(JSON.stringify(answers)).toBe(`{${JSON.stringify(text)}:"B"}`);
  });
});
