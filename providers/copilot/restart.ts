import type { CopilotSession } from '@github/copilot-sdk';
import { isRelayTool, relayToolRestartPrompt } from '../../src/sessions/relay-tool.js';
import type { RunnerContext } from '../../src/sessions/runner.js';
import { classicCardDraft, classicResponse, inputErrorText, toCardDraft, toToolResult } from './adapter.js';
import type { PermissionRequest } from './approvals.js';
import { formCardDraft, formResult } from '../../src/cards/elicitation-form.js';
import { formText, never, relayToolCall, relayToolResult, RESTARTED, type copilotHandlers, type CopilotState, type CopilotToolResult } from './handlers.js';
import { ASK_USER, COPILOT_FORM } from './tool.js';

// A Copilot session after a relay restart (runner.ts). sdk engine: the runtime kept our
// pending ask_user and relay tool calls open (continuePendingWork), so each one's card is
// re-opened (same toolCallId → the same stored card) and its answer handed to the call.
// Extension engine: the runtime cannot take a late answer, neither to its own ask_user nor to
// a relay tool call, so the card is re-opened the same way and its outcome goes in as a new
// user message.

/** What the restart needs of the Copilot runner. */
export interface CopilotTurns {
  readonly ctx: RunnerContext;
  readonly state: CopilotState;
  open(resume: boolean, continuePendingWork?: boolean): Promise<CopilotSession>;
  turn(prompt: string, resume?: boolean): Promise<void>;
  /** Resolves on the next session.idle; `cancel()` stops watching. */
  idle(s: CopilotSession): Promise<void> & { cancel(): void };
  readonly onPermissionRequest: ReturnType<typeof copilotHandlers>['onPermissionRequest'];
}

export async function resumeAfterRestart(runner: CopilotTurns, prompt: string): Promise<void> {
  // Stopped before the Copilot session existed: start it from the prompt.
  if (!runner.state.copilotSessionId) return runner.turn(prompt);
  return runner.ctx.session.engine === 'extension' ? resumeExtension(runner) : resumeSdk(runner);
}

async function resumeExtension(runner: CopilotTurns): Promise<void> {
  const { ctx, state } = runner;
  const { pendingAsk, pendingForm, pendingRelayCalls = [] } = state;
  await runner.open(true);
  const notes: string[] = [];
  for (const call of pendingRelayCalls) {
    const result = await relayToolCall(ctx, call.name, call.args, call.toolCallId);
    if (!result) return never<void>();
    notes.push(relayToolRestartPrompt(call.name, result, 'sentence'));
  }
  if (pendingRelayCalls.length) {
    delete state.pendingRelayCalls;
    ctx.saveState(state);
  }
  const say = (text: string) => runner.turn([...notes, text].join('\n\n'), true);
  if (pendingForm) {
    const card = await ctx.ask({ ...formCardDraft(pendingForm.request, COPILOT_FORM), toolCallId: pendingForm.toolCallId });
    if (card.status === 'pending') return never<void>();
    delete state.pendingForm;
    ctx.saveState(state);
    const text = formText(formResult(pendingForm.request, card));
    ctx.log('tool', text, card.id);
    return say(`Your form was still open when askrelay restarted. ${text}`);
  }
  if (!pendingAsk) return notes.length ? runner.turn(notes.join('\n\n'), true) : runner.turn(RESTARTED, true);
  const card = await ctx.ask({ ...classicCardDraft(pendingAsk.request), toolCallId: pendingAsk.toolCallId });
  if (card.status === 'pending') return never<void>();
  delete state.pendingAsk;
  ctx.saveState(state);
  const response = classicResponse(card, pendingAsk.request);
  ctx.log('tool', response.wasFreeform ? `User responded: ${response.answer}` : `User selected: ${response.answer}`, card.id);
  return say(
    card.status === 'answered'
      ? `The user answered your question while askrelay restarted: ${response.answer}`
      : `Your question got no answer while askrelay restarted. ${response.answer}`,
  );
}

async function resumeSdk(runner: CopilotTurns): Promise<void> {
  const { ctx } = runner;
  const s = await runner.open(true, true);
  const calls = pendingAskCalls(await s.getEvents());
  // Permission requests still open re-open their approval card (same toolCallId → the same card).
  const permissions = await s.rpc.permissions
    .pendingRequests()
    .then((r) => ((r as { items?: { requestId: string; request: PermissionRequest }[] }).items ?? []))
    .catch(() => []);
  if (!calls.length && !permissions.length) return runner.turn(RESTARTED, true);
  const ended = runner.idle(s);
  const [refused] = await Promise.all([
    Promise.all(calls.map((call) => deliver(ctx, s, call))).then((notes) => notes.filter((note): note is string => note !== undefined)),
    ...permissions.map(async ({ requestId, request }) => {
      const result = await runner.onPermissionRequest(request);
      if (result.kind !== 'no-result') await s.rpc.permissions.handlePendingPermissionRequest({ requestId, result } as never);
    }),
  ]);
  if (ctx.signal.aborted) return;
  // A runtime that took none of the results has nothing to do, and never goes idle.
  if (refused.length === calls.length && !permissions.length) ended.cancel();
  await ended;
  // What it refused is not lost: the model reads it as the next user message.
  if (refused.length) await runner.turn(refused.join('\n\n'), true);
}

/**
 * Hands a re-opened card's result to the pending call. The runtime refuses it when it no
 * longer holds the call (the session was continued in another Copilot client while askrelay
 * was down, which interrupts the call without recording it): then the result, as the next
 * user message, is returned. Undefined once handed over, or when stopping under an open card.
 */
async function deliver(ctx: RunnerContext, s: CopilotSession, call: PendingCall): Promise<string | undefined> {
  const result = await pendingResult(ctx, call);
  if (result === undefined) return undefined; // stopping under an open card: the call stays pending
  const done = await s.rpc.tools.handlePendingToolCall({ requestId: call.requestId, result } as never);
  if ((done as { success?: boolean }).success) return undefined;
  ctx.log('system', `The answer could not be handed to the resumed Copilot session (${call.toolCallId}); askrelay sends it as the next message instead.`);
  const text = typeof result === 'string' ? result : result.textResultForLlm;
  return relayToolRestartPrompt(call.toolName, { text, isError: typeof result !== 'string' }, 'sentence');
}

/** A pending call's result; the same toolCallId re-opens the same card. */
async function pendingResult(ctx: RunnerContext, call: PendingCall): Promise<CopilotToolResult | undefined> {
  if (call.toolName !== ASK_USER) {
    // A relay tool call (start_session / watch_session waiting on its approval card).
    const result = await relayToolCall(ctx, call.toolName, call.arguments, call.toolCallId);
    return result && relayToolResult(result);
  }
  const parsed = toCardDraft(call.arguments);
  if (!parsed.ok) return { textResultForLlm: inputErrorText(parsed.error), resultType: 'failure' };
  const card = await ctx.ask({ ...parsed.draft, toolCallId: call.toolCallId });
  if (card.status === 'pending') return undefined;
  const text = toToolResult(card);
  ctx.log('tool', text, card.id);
  return text;
}

interface PendingCall {
  requestId: string;
  toolCallId: string;
  toolName: string;
  arguments: unknown;
}

/** Our ask_user and relay tool calls the stored history shows as requested and never completed. */
export function pendingAskCalls(events: readonly { type: string; data: unknown }[]): PendingCall[] {
  const done = new Set<string>();
  for (const e of events) {
    const data = e.data as { requestId?: string; toolCallId?: string };
    if (e.type === 'external_tool.completed' && data.requestId) done.add(data.requestId);
    if (e.type === 'tool.execution_complete' && data.toolCallId) done.add(data.toolCallId);
  }
  const calls: PendingCall[] = [];
  for (const e of events) {
    if (e.type !== 'external_tool.requested') continue;
    const data = e.data as { requestId: string; toolCallId: string; toolName: string; arguments?: unknown };
    if ((data.toolName !== ASK_USER && !isRelayTool(data.toolName)) || done.has(data.requestId) || done.has(data.toolCallId)) continue;
    calls.push({ requestId: data.requestId, toolCallId: data.toolCallId, toolName: data.toolName, arguments: data.arguments });
  }
  return calls;
}
