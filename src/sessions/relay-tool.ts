import { z } from 'zod';
import { toolJsonSchema } from '../cards/ask-dialect.js';
import { AnswerSchema, type Card, type CardDraft } from '../cards/model.js';
import { fieldPath, firstIssueText } from '../cards/issue-text.js';
import { RelayError } from '../errors.js';
import type { Principal } from '../relay/access.js';
import type { CardAccess } from '../relay/card-access.js';
import type { Session, StartSession } from './model.js';
import { startSessionSchema } from './model.js';
import { orList, providerIdSchema } from './providers.js';
import type { RunnerContext } from './runner.js';
import { clip } from '../cards/text.js';
import { startSessionApproval, watchSessionApproval } from './approval-text.js';
import { RELAY_TOOL_NAMES, type RelayToolDefinition, type RelayToolName, type RelayToolResult } from './relay-tool-contract.js';

export { RELAY_TOOL_NAMES, type RelayToolDefinition, type RelayToolName, type RelayToolResult } from './relay-tool-contract.js';

// The relay tool: what an agent uses to work with other sessions. Every session the relay
// runs gets it in its provider's own form (providers/<id>/ turn RELAY_TOOLS into their tool
// definitions), and MCP clients get it on /mcp. One implementation here, one principal per
// call; the access rules (src/relay/access.ts) decide, and approval cards ask the human.
// Runners hand their model's calls to runRelayTool (below), the one way every provider runs them.

// No arguments; any given are ignored (and the schema says nothing of them: `additionalProperties: {}` is noise strict checkers warn about).
export const ListQuestionsInput = z.object({});
export const AnswerQuestionInput = z.object({
  cardId: z.string({ error: 'cardId is required: the id list_questions gave' }).min(1, 'cardId is empty'),
  answers: z.union([AnswerSchema, z.string().min(1, 'answers is empty')], {
    error: 'answers must be {questionId: {selected: [option labels], text?}} or a plain-text reply such as "1" or "PostgreSQL"',
  }),
});
/** start_session's input: a start request without askUserVariant and plan (the human's choices), the provider one of these. */
export const startSessionInput = (providerIds: readonly string[]) => startSessionSchema(providerIdSchema(providerIds)).omit({ askUserVariant: true, plan: true, labels: true });
export const WatchSessionInput = z.object({ sessionId: z.string({ error: 'sessionId is required' }).min(1, 'sessionId is empty') });

const ASK_HUMAN_FIRST =
  'Ask the human first unless they let agents decide: only answer a question when list_questions says you may (mayAnswer true).';

/** The relay tool for a relay running these providers (start_session names them). */
export const relayTools = (providerIds: readonly string[]) => [
  {
    name: 'list_questions',
    description: `Lists the questions (cards) that agent sessions are waiting on and that you may see, with their ids, options and whether you may answer them. ${ASK_HUMAN_FIRST}`,
    schema: ListQuestionsInput,
    waits: false,
  },
  {
    name: 'answer_question',
    description: `Answers another session's pending question. cardId comes from list_questions; answers is either {questionId: {selected: [option labels], text?: "typed answer"}} or a plain-text reply such as "1", "PostgreSQL" or "1, 3". ${ASK_HUMAN_FIRST} Approval cards are the human's alone, and you never answer your own session's questions.`,
    schema: AnswerQuestionInput,
    waits: false,
  },
  {
    name: 'start_session',
    description:
      `Starts a new agent session (provider ${orList(providerIds)}) with a prompt. The human must approve it first: this waits until they decide, and says whether the session was started and its id.`,
    schema: startSessionInput(providerIds),
    waits: true,
  },
  {
    name: 'watch_session',
    description:
      "Reads another session's transcript and its cards. The first time for a session the human must approve it (this waits until they decide); after that it answers at once.",
    schema: WatchSessionInput,
    waits: true,
  },
] as const;

/** The calls that may open an approval card, so may wait on the human. */
const WAITING_TOOLS: readonly RelayToolName[] = ['start_session', 'watch_session'];

export const relayToolDefinitions = (providerIds: readonly string[]): readonly RelayToolDefinition[] =>
  relayTools(providerIds).map(({ name, description, schema, waits }) => {
    return { name, description, inputSchema: toolJsonSchema(schema), waits };
  });

export const isRelayTool = (name: string): name is RelayToolName => (RELAY_TOOL_NAMES as readonly string[]).includes(name);

/** Whether a call of this relay tool may wait on an approval card (start_session, watch_session). */
export const relayToolWaits = (name: string): boolean => (WAITING_TOOLS as readonly string[]).includes(name);

/** Opens a card for the caller and resolves once it is closed (the session's ctx.ask, or MCP's). */
export type AskFn = (draft: CardDraft) => Promise<Card>;

/** What the relay tool needs from the session manager. */
export interface SessionsPort {
  start(input: StartSession): Promise<Session>;
  get(id: string): Promise<Session>;
  grantWatch(watcher: string, target: string): Promise<void>;
  watches(watcher: string, target: string): Promise<boolean>;
}

export interface RunRelayToolOptions {
  /** The model's id for the call: an approval card it raises re-attaches through it after a restart. */
  toolCallId?: string;
  /** The model's input could not be read (not JSON): this sentence is the result, an error. */
  invalid?: string;
  /** The transcript line names the tool (`name: text`, the default), or is the text alone (Copilot, Grok). */
  logName?: boolean;
}

const LOG_CHARS = 4000;

/**
 * Runs one of the model's relay tool calls for a session's runner. Never throws: an error
 * becomes a sentence the model reads ("askrelay could not run <tool>: …"). Logs one `tool`
 * transcript line, capped. Resolves undefined when the session was stopped (or the relay shut
 * down) meanwhile: the runner then hands the model nothing and records nothing, so a restart
 * makes the call again and its approval card re-attaches through the tool call id.
 */
export async function runRelayTool(
  ctx: Pick<RunnerContext, 'relayTools' | 'signal' | 'log' | 'heartbeat'>,
  name: string,
  args: unknown,
  options: RunRelayToolOptions = {},
): Promise<RelayToolResult | undefined> {
  ctx.heartbeat();
  const result = await relayToolOutcome(ctx.relayTools, name, args, options);
  if (ctx.signal.aborted) return undefined;
  ctx.log('tool', clip(options.logName === false ? result.text : `${name}: ${result.text}`, LOG_CHARS));
  return result;
}

async function relayToolOutcome(relayTools: RunnerContext['relayTools'], name: string, args: unknown, options: RunRelayToolOptions): Promise<RelayToolResult> {
  if (!relayTools) return fail(`The relay tool ${name} is not available in this session.`);
  if (options.invalid !== undefined) return fail(options.invalid);
  try {
    return await relayTools.call(name, args, options.toolCallId);
  } catch (err) {
    return fail(`askrelay could not run ${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * What the model reads after a restart about a relay tool call that was open (waiting on its
 * approval card) when the relay stopped: the call was made again and this is its outcome.
 * `heading`: the resumed session's prompt (Claude Code); `sentence`: one of the notes of the
 * next user message (Copilot's extension engine).
 */
export function relayToolRestartPrompt(tool: string, result: RelayToolResult, style: 'heading' | 'sentence' = 'heading'): string {
  if (style === 'sentence') return `Your ${tool} call was still open when askrelay restarted. Its result: ${result.text}`;
  return `(askrelay restarted while your ${tool} call was open. ${result.isError ? 'It failed:' : 'Its result:'})\n${result.text}`;
}

const ok = (text: string): RelayToolResult => ({ text, isError: false });
const fail = (text: string): RelayToolResult => ({ text, isError: true });
const json = (value: unknown) => JSON.stringify(value, null, 2);

export class RelayToolbox {
  /** The tools as offered to models (and on /mcp): start_session names this relay's providers. */
  readonly definitions: readonly RelayToolDefinition[];
  private readonly startInput: ReturnType<typeof startSessionInput>;

  constructor(
    private readonly access: CardAccess,
    private readonly sessions: SessionsPort,
    providerIds: readonly string[],
  ) {
    this.definitions = relayToolDefinitions(providerIds);
    this.startInput = startSessionInput(providerIds);
  }

  async call(who: Principal, name: string, args: unknown, ask: AskFn): Promise<RelayToolResult> {
    try {
      switch (name) {
        case 'list_questions':
          return await this.listQuestions(who);
        case 'answer_question':
          return await this.answerQuestion(who, parse(AnswerQuestionInput, args));
        case 'start_session':
          return await this.startSession(who, parse(this.startInput, args), ask);
        case 'watch_session':
          return await this.watchSession(who, parse(WatchSessionInput, args), ask);
        default:
          return fail(`There is no relay tool "${name}"; use ${RELAY_TOOL_NAMES.join(', ')}.`);
      }
    } catch (err) {
      if (err instanceof RelayError) return fail(err.message);
      throw err;
    }
  }

  private async listQuestions(who: Principal): Promise<RelayToolResult> {
    const cards = await this.access.list(who, { status: 'pending' });
    const refusals = await this.access.refusals(who, cards);
    const questions = cards.map((card, i) => {
      const refusal = refusals[i];
      return {
        cardId: card.id,
        sessionId: card.sessionId,
        provider: card.provider,
        kind: card.kind,
        mayAnswer: !refusal,
        ...(refusal ? { why: refusal.message } : {}),
        expiresAt: card.expiresAt,
        questions: card.questions.map((q) => ({
          id: q.id,
          ...(q.header ? { header: q.header } : {}),
          text: q.text,
          options: q.options.map((o) => o.label),
          multiSelect: q.multiSelect,
        })),
      };
    });
    if (!questions.length) return ok('No pending questions that you can see.');
    return ok(json({ questions }));
  }

  private async answerQuestion(who: Principal, input: z.infer<typeof AnswerQuestionInput>): Promise<RelayToolResult> {
    let card: Card;
    try {
      card =
        typeof input.answers === 'string'
          ? await this.access.reply(who, input.cardId, input.answers)
          : await this.access.answer(who, input.cardId, input.answers);
    } catch (err) {
      if (err instanceof RelayError && err.code === 'not_found') {
        return fail(`No card "${input.cardId}" that you can see. Cards of sessions whose human has not allowed agents to answer are not shown to agents; ask the human instead.`);
      }
      // A plain-text reply has no way to say "these are words"; the structured form does.
      if (err instanceof RelayError && err.code === 'ambiguous_reply') {
        return fail(`${err.message} To send it as text, give answers as {"<question id>": {"selected": [], "text": "<your words>"}}.`);
      }
      throw err;
    }
    return ok(`Answered card ${card.id}: ${summary(card)}`);
  }

  private async startSession(who: Principal, input: StartSession, ask: AskFn): Promise<RelayToolResult> {
    const decision = await ask(startSessionApproval(who, input));
    const verdict = approved(decision);
    if (verdict !== true) return fail(`The session was not started: ${verdict}`);
    const session = await this.sessions.start(input);
    await this.sessions.grantWatch(who.id, session.id);
    return ok(`The human approved. Started session ${session.id} (${session.provider}, engine ${session.engine}); it is ${session.status}. Use watch_session with sessionId "${session.id}" to follow it.`);
  }

  private async watchSession(who: Principal, input: z.infer<typeof WatchSessionInput>, ask: AskFn): Promise<RelayToolResult> {
    const target = await this.sessions.get(input.sessionId);
    if (who.kind === 'agent' && target.id !== who.sessionId && !(await this.sessions.watches(who.id, target.id))) {
      const decision = await ask(watchSessionApproval(who, target));
      const verdict = approved(decision);
      if (verdict !== true) return fail(`You may not watch session ${target.id}: ${verdict}`);
      await this.sessions.grantWatch(who.id, target.id);
    }
    const session = await this.sessions.get(target.id);
    const cards = (await this.access.list(who, { sessionId: target.id })).map((card) => ({
      cardId: card.id,
      status: card.status,
      kind: card.kind,
      questions: card.questions.map((q) => ({ id: q.id, text: q.text, options: q.options.map((o) => o.label) })),
      ...(card.answer ? { answer: card.answer, answeredBy: card.answeredBy } : {}),
    }));
    const { transcript = [], ...record } = session;
    return ok(json({ session: record, transcript: transcript.slice(-50), cards: cards.slice(-20) }));
  }
}

function parse<T extends z.ZodType>(schema: T, args: unknown): z.infer<T> {
  const result = schema.safeParse(args ?? {});
  if (!result.success) {
    const issue = result.error.issues[0];
    const field = fieldPath(issue.path);
    // Messages that already name their field (answers must be…, prompt is empty) stand alone.
    const text = field && !issue.message.startsWith(field) ? firstIssueText(result.error) : issue.message;
    throw new RelayError('invalid_request', `${text}.`);
  }
  return result.data;
}

/** true, or the sentence saying why not. */
function approved(card: Card): true | string {
  if (card.status === 'answered') {
    const entry = card.answer?.approve;
    if (entry?.selected.includes('Approve')) return true;
    return entry?.text ? `the human denied it and wrote: ${entry.text}` : 'the human denied it.';
  }
  if (card.status === 'skipped') return 'the human declined to decide.';
  if (card.status === 'expired') return 'nobody decided in time.';
  return 'the approval card was cancelled.';
}

function summary(card: Card): string {
  return card.questions
    .map((q) => {
      const entry = card.answer?.[q.id];
      const parts = [...(entry?.selected ?? []), ...(entry?.text ? [entry.text] : [])];
      return `${q.text} → ${parts.join(', ') || '(no answer)'}`;
    })
    .join('; ');
}
