import { createRequire } from 'node:module';
import { CopilotClient, RuntimeConnection, type CopilotSession } from '@github/copilot-sdk';
import { agentEnv } from '../../src/sessions/agent-env.js';
import { relayGuidance } from '../../src/sessions/guidance.js';
import { isRelayTool, relayToolRestartPrompt } from '../../src/sessions/relay-tool.js';
import { missingKeyRunner, type ProviderRunner, type Runner, type RunnerContext } from '../../src/sessions/runner.js';
import { classicCardDraft, classicResponse, inputErrorText, toCardDraft, toToolResult } from './adapter.js';
import { formCardDraft, formResult } from './form.js';
import type { PermissionRequest } from './approvals.js';
import { copilotHandlers, formText, never, relayToolCall, relayToolResult, RESTARTED, type CopilotState, type CopilotToolResult } from './handlers.js';
import { ASK_USER } from './tool.js';

// Copilot and OpenAI through @github/copilot-sdk. Engine `sdk`: askrelay's ask_user
// replaces the built-in one. Engine `extension`: Copilot's own ask_user passes through
// (onUserInputRequest). Both engines also offer the relay tool (handlers.ts). Turns use
// send() and session events, never sendAndWait (60 s).

export interface CopilotEndpointVars {
  name: string;
  /** Without a base URL the runtime uses the logged-in GitHub user. */
  baseUrlVar: string;
  apiKeyVar: string;
  modelVar: string;
  defaultModel: string;
  /** BYOK is required (OpenAI) or optional (Copilot). */
  byokRequired: boolean;
}

export function copilotRunner(vars: CopilotEndpointVars): ProviderRunner {
  return {
    defaultModel: (env) => env[vars.modelVar] || vars.defaultModel,
    create(ctx) {
      const baseUrl = ctx.env[vars.baseUrlVar];
      if (vars.byokRequired && !ctx.env[vars.apiKeyVar]) {
        return missingKeyRunner(vars);
      }
      const provider = baseUrl || vars.byokRequired
        ? { type: 'openai' as const, baseUrl: baseUrl || 'https://api.openai.com/v1', apiKey: ctx.env[vars.apiKeyVar] ?? '' }
        : undefined;
      return copilotEngine(ctx, provider);
    },
  };
}

function copilotEngine(ctx: RunnerContext, provider: { type: 'openai'; baseUrl: string; apiKey: string } | undefined): Runner {
  const state: CopilotState = ctx.loadState<CopilotState>() ?? {};
  const workingDirectory = ctx.env.ASKRELAY_WORKDIR ?? process.cwd();
  const formVariant = ctx.session.engine === 'extension' && ctx.session.askUserVariant === 'form';
  const client = new CopilotClient({
    useLoggedInUser: !provider,
    // The form variant needs the Copilot CLI ≥ 1.0.102 (@github/copilot); the runtime the SDK
    // bundles ignores it. That CLI unpacks itself into $XDG_CACHE_HOME/copilot on first use.
    connection: RuntimeConnection.forStdio({
      env: agentEnv(ctx.env), // the runtime's shell runs as the session, never as the operator
      ...(formVariant ? { path: createRequire(import.meta.url).resolve('@github/copilot/npm-loader.js') } : {}),
    }),
    logLevel: 'warning',
    workingDirectory,
  } as ConstructorParameters<typeof CopilotClient>[0]);
  let session: CopilotSession | undefined;

  const { askUser, relayTools, onUserInputRequest, onPermissionRequest, onElicitationRequest } = copilotHandlers(ctx, state);
  // sdk engine: our ask_user, then the relay tool; extension engine: the relay tool only
  // (Copilot's own ask_user stays, through onUserInputRequest).
  const tools = ctx.session.engine === 'extension' ? relayTools : [askUser, ...relayTools];

  const config = () => ({
    model: ctx.session.model,
    ...(provider ? { provider } : {}),
    streaming: true,
    workingDirectory,
    systemMessage: { mode: 'append' as const, content: relayGuidance(ASK_USER, ctx.session.relayMode) },
    onPermissionRequest,
    ...(formVariant ? { askUserVariant: 'elicitation' as const, onElicitationRequest } : {}),
    ...(ctx.session.engine === 'extension' ? { onUserInputRequest } : {}),
    ...(tools.length ? { tools } : {}),
  });

  async function open(resume: boolean, continuePendingWork = false): Promise<CopilotSession> {
    if (session) return session;
    if (resume && state.copilotSessionId) {
      session = await client.resumeSession(state.copilotSessionId, { ...config(), continuePendingWork } as never);
    } else {
      session = await client.createSession(config() as never);
      state.copilotSessionId = session.sessionId;
      ctx.saveState(state);
    }
    return session;
  }

  async function turn(prompt: string, resume = false): Promise<void> {
    const s = await open(resume);
    const ended = idle(s);
    await s.send({ prompt });
    await ended;
  }

  /**
   * Resolves on the next session.idle (rejects if the turn reported an error), or when stopped.
   * `cancel()` stops watching (a resumed session that took no work never goes idle).
   */
  function idle(s: CopilotSession): Promise<void> & { cancel(): void } {
    let cancel = () => {};
    const ended = new Promise<void>((resolve, reject) => {
      let error: string | undefined;
      const stop = () => {
        off();
        resolve();
      };
      ctx.signal.addEventListener('abort', stop, { once: true });
      cancel = () => {
        ctx.signal.removeEventListener('abort', stop);
        stop();
      };
      const off = s.on((event) => {
        ctx.heartbeat();
        const data = event.data as { content?: string; message?: string };
        if (event.type === 'assistant.message' && data.content?.trim()) ctx.log('assistant', data.content);
        if (event.type === 'session.error') error = data.message ?? 'the Copilot runtime reported an error';
        if (event.type === 'session.idle') {
          off();
          ctx.signal.removeEventListener('abort', stop);
          if (error) reject(new Error(`Copilot reported an error: ${error}`));
          else resolve();
        }
      });
    });
    // Awaited later (after the deliveries of a resume): an error before then is not unhandled.
    ended.catch(() => {});
    return Object.assign(ended, { cancel });
  }

  /**
   * After a restart. sdk engine: the runtime kept our pending ask_user and relay tool calls
   * open (continuePendingWork), so each one's card is re-opened (same toolCallId → the same
   * stored card) and its answer handed to the call. Extension engine: the runtime cannot
   * take a late answer, neither to its own ask_user nor to a relay tool call, so the card is
   * re-opened the same way and its outcome goes in as a new user message.
   */
  async function resume(prompt: string): Promise<void> {
    // Stopped before the Copilot session existed: start it from the prompt.
    if (!state.copilotSessionId) return turn(prompt);
    if (ctx.session.engine === 'extension') {
      const { pendingAsk, pendingForm, pendingRelayCalls = [] } = state;
      await open(true);
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
      const say = (text: string) => turn([...notes, text].join('\n\n'), true);
      if (pendingForm) {
        const card = await ctx.ask({ ...formCardDraft(pendingForm.request), toolCallId: pendingForm.toolCallId });
        if (card.status === 'pending') return never<void>();
        delete state.pendingForm;
        ctx.saveState(state);
        const text = formText(formResult(pendingForm.request, card));
        ctx.log('tool', text, card.id);
        return say(`Your form was still open when askrelay restarted. ${text}`);
      }
      if (!pendingAsk) return notes.length ? turn(notes.join('\n\n'), true) : turn(RESTARTED, true);
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
    const s = await open(true, true);
    const calls = pendingAskCalls(await s.getEvents());
    // Permission requests still open re-open their approval card (same toolCallId → the same card).
    const permissions = await s.rpc.permissions
      .pendingRequests()
      .then((r) => ((r as { items?: { requestId: string; request: PermissionRequest }[] }).items ?? []))
      .catch(() => []);
    if (!calls.length && !permissions.length) return turn(RESTARTED, true);
    const ended = idle(s);
    const [refused] = await Promise.all([
      Promise.all(calls.map((call) => deliver(s, call))).then((notes) => notes.filter((note): note is string => note !== undefined)),
      ...permissions.map(async ({ requestId, request }) => {
        const result = await onPermissionRequest(request);
        if (result.kind !== 'no-result') await s.rpc.permissions.handlePendingPermissionRequest({ requestId, result } as never);
      }),
    ]);
    if (ctx.signal.aborted) return;
    // A runtime that took none of the results has nothing to do, and never goes idle.
    if (refused.length === calls.length && !permissions.length) ended.cancel();
    await ended;
    // What it refused is not lost: the model reads it as the next user message.
    if (refused.length) await turn(refused.join('\n\n'), true);
  }

  /**
   * Hands a re-opened card's result to the pending call. The runtime refuses it when it no
   * longer holds the call (the session was continued in another Copilot client while askrelay
   * was down, which interrupts the call without recording it): then the result, as the next
   * user message, is returned. Undefined once handed over, or when stopping under an open card.
   */
  async function deliver(s: CopilotSession, call: PendingCall): Promise<string | undefined> {
    const result = await pendingResult(call);
    if (result === undefined) return undefined; // stopping under an open card: the call stays pending
    const done = await s.rpc.tools.handlePendingToolCall({ requestId: call.requestId, result } as never);
    if ((done as { success?: boolean }).success) return undefined;
    ctx.log('system', `The answer could not be handed to the resumed Copilot session (${call.toolCallId}); askrelay sends it as the next message instead.`);
    const text = typeof result === 'string' ? result : result.textResultForLlm;
    return relayToolRestartPrompt(call.toolName, { text, isError: typeof result !== 'string' }, 'sentence');
  }

  /** A pending call's result; the same toolCallId re-opens the same card. */
  async function pendingResult(call: PendingCall): Promise<CopilotToolResult | undefined> {
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

  return {
    start: (prompt, resumed) => (resumed ? resume(prompt) : turn(prompt)),
    send: (text) => turn(text, true),
    async stop() {
      await session?.disconnect?.().catch(() => {});
      await client.stop().catch(() => {});
    },
  };
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

// The logged-in GitHub user by default; a BYOK provider when COPILOT_PROVIDER_BASE_URL is set.
export const COPILOT_ENDPOINT: CopilotEndpointVars = {
  name: 'Copilot',
  baseUrlVar: 'COPILOT_PROVIDER_BASE_URL',
  apiKeyVar: 'COPILOT_PROVIDER_API_KEY',
  modelVar: 'COPILOT_MODEL',
  defaultModel: 'gpt-5.1',
  byokRequired: false,
};

export const githubCopilotRunner = copilotRunner(COPILOT_ENDPOINT);
