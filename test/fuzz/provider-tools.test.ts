import { fc, test } from '@fast-check/vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import * as claude from '../../providers/claude/adapter.js';
import * as copilot from '../../providers/copilot/index.js';
import { formCardDraft, formResult } from '../../src/cards/elicitation-form.js';
import { COPILOT_FORM } from '../../providers/copilot/tool.js';
import type { Answer, Card, CardDraft } from '../../src/cards/model.js';
import { RelayError, errorTable } from '../../src/errors.js';
import { Relay } from '../../src/relay/relay.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { asyncCards } from '../../src/store/store.js';
import { anyJson, FUZZ_TIMEOUT_MS, hostileText, reportSlowestCases, runs } from './fuzz-support.js';

// Each provider's question tool input, as the model (or Copilot's runtime) could send it,
// through the provider's adapter into a real relay core on a real SQLite file, answered (or
// skipped, or cancelled) by a generated human, and back into the provider's result. The
// runners do exactly these steps around their SDK (providers/*/runner.ts, handlers.ts).
//
// Provider-owned tools (Claude's AskUserQuestion, Copilot's built-in ask_user in both
// variants) are taken as the provider hands them: whatever their adapter accepts must become
// a card. askrelay's own ask_user may still be refused by the relay, with a documented code.

reportSlowestCases();

let dir: string;
let store: SqliteStore;
let relay: Relay;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'askrelay-fuzz-'));
  store = new SqliteStore(join(dir, 'askrelay.sqlite'));
  relay = new Relay({ store: asyncCards(store), waits: { default: 3_600_000 } });
  await relay.start();
});
afterAll(() => {
  relay.stop();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

let calls = 0;
const ask = (provider: string, draft: CardDraft): Promise<Card> => relay.create({ ...draft, provider, sessionId: null, toolCallId: `fuzz-${++calls}` });

/** How the generated human closes the card: picks (indexes into the options), typed text, or no answer. */
const human = () => fc.record({ how: fc.constantFrom('answer', 'answer', 'answer', 'skip', 'cancel'), picks: fc.array(fc.nat(), { maxLength: 4 }), text: fc.option(hostileText(), { nil: undefined }) });
type Human = { how: string; picks: number[]; text?: string };

/** Closes the card as the human chose; a refused answer (a documented code) leaves it to be skipped. */
async function close(card: Card, h: Human): Promise<Card> {
  if (h.how === 'answer') {
    const answer: Answer = Object.fromEntries(
      card.questions.map((q) => {
        const selected = q.options.length ? h.picks.map((n) => q.options[n % q.options.length].label) : [];
        return [q.id, { selected: q.multiSelect || card.selectSeveral ? selected : selected.slice(0, 1), ...(h.text !== undefined && q.freeText ? { text: h.text } : {}) }];
      }),
    );
    try {
      return await relay.answer(card.id, answer);
    } catch (err) {
      expectDocumentedError(err);
    }
  }
  return h.how === 'cancel' ? relay.cancel(card.id) : relay.skip(card.id);
}

function expectDocumentedError(err: unknown): void {
  expect(err, String(err)).toBeInstanceOf(RelayError);
  expect(Object.hasOwn(errorTable, (err as RelayError).code)).toBe(true);
  expect((err as RelayError).message.length).toBeGreaterThan(0);
}

const askUserQuestion = () =>
  fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        questions: fc.array(
          fc.record(
            {
              question: hostileText(),
              header: hostileText(),
              multiSelect: fc.oneof(fc.boolean(), anyJson()),
              options: fc.array(fc.record({ label: hostileText(), description: hostileText(), preview: hostileText() }, { requiredKeys: ['label'] }), { maxLength: 6 }),
              extra: anyJson(),
            },
            { requiredKeys: ['question', 'options'] },
          ),
          { maxLength: 5 },
        ),
        answers: fc.dictionary(hostileText(), hostileText(), { maxKeys: 2 }),
      }, { requiredKeys: ['questions'] }),
    },
    { weight: 1, arbitrary: anyJson() },
  );

const copilotAskUser = () =>
  fc.oneof(
    { weight: 5, arbitrary: fc.record({ question: hostileText(), choices: fc.oneof(fc.array(hostileText(), { maxLength: 12 }), anyJson()), multi_select: fc.oneof(fc.boolean(), anyJson()) }, { requiredKeys: ['question'] }) },
    { weight: 1, arbitrary: anyJson() },
  );

const userInputRequest = () =>
  fc.record({ question: hostileText(), choices: fc.array(hostileText(), { maxLength: 12 }), allowFreeform: fc.boolean() }, { requiredKeys: ['question'] });

const fieldSchema = () =>
  fc.record({
    type: fc.constantFrom('string', 'number', 'integer', 'boolean', 'array', 'object', 'null'),
    title: hostileText(),
    description: hostileText(),
    enum: fc.array(fc.oneof(hostileText(), fc.integer(), fc.boolean()), { maxLength: 6 }),
    oneOf: fc.array(fc.record({ const: fc.oneof(hostileText(), fc.integer()), title: hostileText() }, { requiredKeys: [] }), { maxLength: 4 }),
    items: fc.record({ enum: fc.array(hostileText(), { maxLength: 6 }), anyOf: fc.array(fc.record({ const: hostileText(), title: hostileText() }), { maxLength: 4 }) }, { requiredKeys: [] }),
  }, { requiredKeys: [] });
const elicitation = () =>
  fc.record({ message: hostileText(), requestedSchema: fc.record({ properties: fc.dictionary(hostileText(), fieldSchema(), { maxKeys: 5 }) }, { requiredKeys: [] }) }, { requiredKeys: [] });

describe('fuzz: provider question tools into cards and back', () => {
  test.prop([askUserQuestion(), human()], runs())(
    "Claude's AskUserQuestion: refused with a sentence for the model, or a card whose answer Claude Code can read",
    async (input, h) => {
      const parsed = claude.toCardDraft(input);
      if (!parsed.ok) {
        expect(claude.toolInputError(parsed.error)).toMatch(/\S/);
        return;
      }
      const card = await close(await ask('claude', parsed.draft), h); // a provider-owned tool always becomes a card
      const updated = claude.toUpdatedInput(parsed.input, card);
      const answers = (updated as { answers?: Record<string, unknown> }).answers ?? {};
      for (const value of Object.values(answers)) expect(typeof value).toBe('string');
      expect(typeof claude.toToolResult(parsed.input, card)).toBe('string');
    },
    FUZZ_TIMEOUT_MS,
  );

  test.prop([copilotAskUser(), human()], runs())(
    "askrelay's ask_user on Copilot and OpenAI: a tool error the model can read, or a card and its User selected / responded line",
    async (args, h) => {
      const parsed = copilot.toCardDraft(args);
      if (!parsed.ok) {
        expect(parsed.error).toMatch(/\S/);
        return;
      }
      let card: Card;
      try {
        card = await ask('copilot', parsed.draft);
      } catch (err) {
        expectDocumentedError(err); // the handler hands this sentence to the model as a failure
        return;
      }
      expect(copilot.toToolResult(await close(card, h))).toMatch(/\S/);
    },
    FUZZ_TIMEOUT_MS,
  );

  test.prop([userInputRequest(), human()], runs())(
    "Copilot's built-in ask_user ({question, choices}): always a card, always an {answer, wasFreeform}",
    async (request, h) => {
      const card = await close(await ask('copilot', copilot.classicCardDraft(request)), h);
      const response = copilot.classicResponse(card);
      expect(typeof response.answer).toBe('string');
      expect(typeof response.wasFreeform).toBe('boolean');
    },
    FUZZ_TIMEOUT_MS,
  );

  test.prop([elicitation(), human()], runs())(
    "Copilot's form ask_user ({message, requestedSchema}): always a card, always accept / decline / cancel",
    async (request, h) => {
      const card = await close(await ask('copilot', formCardDraft(request as never, COPILOT_FORM)), h);
      const result = formResult(request as never, card);
      expect(['accept', 'decline', 'cancel']).toContain(result.action);
    },
    FUZZ_TIMEOUT_MS,
  );
});
