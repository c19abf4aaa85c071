import { randomUUID } from 'node:crypto';
import { defineTool } from '@github/copilot-sdk';
import type { RunnerContext } from '../../src/sessions/runner.js';
import { runRelayTool, type RelayToolResult } from '../../src/sessions/relay-tool.js';
import { classicCardDraft, classicResponse, inputErrorText, toCardDraft, toToolResult, type UserInputRequest, type UserInputResponse } from './adapter.js';
import { formCardDraft, formResult, type ElicitationRequest, type ElicitationResult } from '../../src/cards/elicitation-form.js';
import { permissionDecision, permissionDraft, type PermissionRequest } from './approvals.js';
import { ASK_USER, ASK_USER_DESCRIPTION, ASK_USER_PARAMETERS, COPILOT_FORM, copilotToolSchema } from './tool.js';

// The callbacks the Copilot SDK calls while a turn runs: our ask_user tool (sdk engine),
// the built-in ask (extension engine), its form variant, and tool approvals. Each one turns
// the request into a card and the card back into the SDK's answer; runner.ts owns the session.

/** What a Copilot session keeps across relay restarts (ctx.saveState). */
export interface CopilotState {
  copilotSessionId?: string;
  /** Extension engine: the built-in ask waiting on a card, so a restart can re-open that card. */
  pendingAsk?: { toolCallId: string; request: UserInputRequest };
  /** Extension engine, form variant: the same for an open form. */
  pendingForm?: { toolCallId: string; request: ElicitationRequest };
  /**
   * Extension engine: relay tool calls under way that may wait on an approval card
   * (start_session, watch_session), so a restart can re-open that card and tell the model the outcome.
   */
  pendingRelayCalls?: { toolCallId: string; name: string; args: unknown }[];
}

/** Handed back to the runtime when the relay stops under a pending card: the call stays open. */
export const never = <T>() => new Promise<T>(() => {});
export const RESTARTED = 'askrelay restarted; continue where you left off.';

export function copilotHandlers(ctx: RunnerContext, state: CopilotState) {
  const askUser = defineTool(ASK_USER, {
    description: ASK_USER_DESCRIPTION,
    parameters: ASK_USER_PARAMETERS as unknown as Record<string, unknown>,
    overridesBuiltInTool: true,
    // Our own tool asks through its card; a permission prompt for it would be a second one.
    skipPermission: true,
    // Never throws: the model would read only "Tool execution failed".
    handler: async (args, invocation) => {
      try {
        const parsed = toCardDraft(args);
        if (!parsed.ok) {
          ctx.log('tool', inputErrorText(parsed.error));
          return { textResultForLlm: inputErrorText(parsed.error), resultType: 'failure' };
        }
        const card = await ctx.ask({ ...parsed.draft, toolCallId: invocation.toolCallId });
        // The relay is stopping: answer nothing, so a restart finds the call pending.
        if (card.status === 'pending') return never<string>();
        const text = toToolResult(card);
        ctx.log('tool', text, card.id);
        return text;
      } catch (err) {
        return { textResultForLlm: `askrelay could not show the question: ${(err as Error).message}`, resultType: 'failure' };
      }
    },
  });

  // The relay tool (list_questions, answer_question, start_session, watch_session), when the
  // relay runs with access rules. Both engines get it. Not deferred behind tool search, so the
  // model always sees all four; no permission prompt, since start_session and watch_session
  // raise their own approval cards.
  const relayTools = (ctx.relayTools?.definitions ?? []).map((definition) =>
    defineTool(definition.name, {
      description: definition.description,
      parameters: copilotToolSchema(definition.inputSchema) as Record<string, unknown>,
      skipPermission: true,
      defer: 'never',
      handler: async (args, { toolCallId }) => {
        // sdk engine: a restart finds the call itself pending (continuePendingWork). The
        // extension engine's runtime drops it, so a call that may wait is kept here until it is done.
        const track = ctx.session.engine === 'extension' && definition.waits;
        if (track) {
          state.pendingRelayCalls = [...(state.pendingRelayCalls ?? []), { toolCallId, name: definition.name, args }];
          ctx.saveState(state);
        }
        const result = await relayToolCall(ctx, definition.name, args, toolCallId);
        if (!result) return never<CopilotToolResult>();
        if (track) {
          state.pendingRelayCalls = state.pendingRelayCalls?.filter((call) => call.toolCallId !== toolCallId);
          if (!state.pendingRelayCalls?.length) delete state.pendingRelayCalls;
          ctx.saveState(state);
        }
        return relayToolResult(result);
      },
    }),
  );

  const onUserInputRequest = async (request: UserInputRequest) => {
    try {
      const toolCallId = `ask:${randomUUID()}`;
      state.pendingAsk = { toolCallId, request };
      ctx.saveState(state);
      const card = await ctx.ask({ ...classicCardDraft(request), toolCallId });
      if (card.status === 'pending') return never<UserInputResponse>();
      delete state.pendingAsk;
      ctx.saveState(state);
      const response = classicResponse(card, request);
      ctx.log('tool', response.wasFreeform ? `User responded: ${response.answer}` : `User selected: ${response.answer}`, card.id);
      return response;
    } catch (err) {
      return { answer: `askrelay could not show the question: ${(err as Error).message}`, wasFreeform: true };
    }
  };

  const onPermissionRequest = async (request: PermissionRequest) => {
    if (ctx.env.ASKRELAY_APPROVE_TOOLS === '1') return { kind: 'approve-once' as const };
    try {
      const card = await ctx.ask({ ...permissionDraft(request), toolCallId: request.toolCallId && `permission:${request.toolCallId}` });
      // The relay is stopping: no decision; a resumed session asks again (the same card).
      if (card.status === 'pending') return { kind: 'no-result' as const };
      return permissionDecision(card);
    } catch {
      return { kind: 'reject' as const, feedback: 'askrelay could not show the approval.' };
    }
  };

  // Never throws: the SDK would cancel the form. The runtime cancels an open form when its
  // client goes away, so after a restart the card's answer goes in as a user message.
  const onElicitationRequest = async (request: ElicitationRequest) => {
    try {
      const toolCallId = `form:${randomUUID()}`;
      state.pendingForm = { toolCallId, request };
      ctx.saveState(state);
      const card = await ctx.ask({ ...formCardDraft(request, COPILOT_FORM), toolCallId });
      if (card.status === 'pending') return { action: 'cancel' as const };
      delete state.pendingForm;
      ctx.saveState(state);
      const result = formResult(request, card);
      ctx.log('tool', formText(result), card.id);
      return result;
    } catch {
      return { action: 'cancel' as const };
    }
  };

  return { askUser, relayTools, onUserInputRequest, onPermissionRequest, onElicitationRequest };
}

export type CopilotToolResult = string | { textResultForLlm: string; resultType: 'failure' };

/** A relay tool result in the runtime's form: the text, or a failure the model reads verbatim. */
export function relayToolResult(result: RelayToolResult): CopilotToolResult {
  return result.isError ? { textResultForLlm: result.text, resultType: 'failure' } : result.text;
}

/**
 * One relay tool call for the runtime (runRelayTool: never throws, since the model would read
 * only "Tool execution failed"). Undefined when the relay stopped while an approval card was
 * open: answer nothing then, so the call stays pending and a restart re-opens the same card
 * (same toolCallId). The transcript line is the text alone.
 */
export const relayToolCall = (ctx: RunnerContext, name: string, args: unknown, toolCallId: string) =>
  runRelayTool(ctx, name, args, { toolCallId, logName: false });

/** A form's outcome as one line, for the transcript and for a message after a restart. */
export function formText(result: ElicitationResult): string {
  if (result.action !== 'accept') return result.action === 'decline' ? 'The user declined to fill in the form.' : 'Nobody filled in the form.';
  const pairs = Object.entries(result.content).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join(', ') : v}`);
  return pairs.length ? `The user answered: ${pairs.join(', ')}` : 'The user accepted without values.';
}
