import { CopilotClient, defineTool, RuntimeConnection, type CopilotSession } from '@github/copilot-sdk';
import { relayGuidance } from '../../src/sessions/guidance.js';
import type { Runner, RunnerContext, RunnerFactory } from '../../src/sessions/runner.js';
import { classicCardDraft, classicResponse, inputErrorText, toCardDraft, toToolResult, type UserInputRequest } from './adapter.js';
import { permissionDecision, permissionDraft, type PermissionRequest } from './approvals.js';
import { ASK_USER, ASK_USER_DESCRIPTION, ASK_USER_PARAMETERS } from './tool.js';

// Copilot and OpenAI through @github/copilot-sdk. Engine `sdk`: askrelay's ask_user
// replaces the built-in one. Engine `extension`: Copilot's own ask_user passes through
// (onUserInputRequest). Turns use send() and session events, never sendAndWait (60 s).

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

interface State {
  copilotSessionId?: string;
}

export function copilotRunner(vars: CopilotEndpointVars): RunnerFactory {
  return {
    engines: ['sdk', 'extension'],
    defaultModel: (env) => env[vars.modelVar] || vars.defaultModel,
    create(ctx) {
      const baseUrl = ctx.env[vars.baseUrlVar];
      if (vars.byokRequired && !ctx.env[vars.apiKeyVar]) {
        const missing = async () => {
          throw new Error(`${vars.apiKeyVar} is not set: ${vars.name} sessions need it (and ${vars.baseUrlVar} for another endpoint).`);
        };
        return { start: missing, send: missing, stop: async () => {} };
      }
      const provider = baseUrl || vars.byokRequired
        ? { type: 'openai' as const, baseUrl: baseUrl || 'https://api.openai.com/v1', apiKey: ctx.env[vars.apiKeyVar] ?? '' }
        : undefined;
      return copilotEngine(ctx, provider);
    },
  };
}

function runtimeEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !k.startsWith('ASKRELAY_')) out[k] = v;
  return out;
}

function copilotEngine(ctx: RunnerContext, provider: { type: 'openai'; baseUrl: string; apiKey: string } | undefined): Runner {
  const state: State = ctx.loadState<State>() ?? {};
  const workingDirectory = ctx.env.ASKRELAY_WORKDIR ?? process.cwd();
  const client = new CopilotClient({
    useLoggedInUser: !provider,
    connection: RuntimeConnection.forStdio({ env: runtimeEnv(ctx.env) }),
    logLevel: 'warning',
    workingDirectory,
  } as ConstructorParameters<typeof CopilotClient>[0]);
  let session: CopilotSession | undefined;

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
        const text = toToolResult(card);
        ctx.log('tool', text, card.id);
        return text;
      } catch (err) {
        return { textResultForLlm: `askrelay could not show the question: ${(err as Error).message}`, resultType: 'failure' };
      }
    },
  });

  const onUserInputRequest = async (request: UserInputRequest) => {
    try {
      const card = await ctx.ask(classicCardDraft(request));
      const response = classicResponse(card);
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
      return permissionDecision(card);
    } catch {
      return { kind: 'reject' as const, feedback: 'askrelay could not show the approval.' };
    }
  };

  const config = () => ({
    model: ctx.session.model,
    ...(provider ? { provider } : {}),
    streaming: true,
    workingDirectory,
    systemMessage: { mode: 'append' as const, content: relayGuidance(ASK_USER, ctx.session.relayMode) },
    onPermissionRequest,
    ...(ctx.session.engine === 'extension' ? { onUserInputRequest } : { tools: [askUser] }),
  });

  async function open(resume: boolean): Promise<CopilotSession> {
    if (session) return session;
    if (resume && state.copilotSessionId) {
      session = await client.resumeSession(state.copilotSessionId, config() as never);
    } else {
      session = await client.createSession(config() as never);
      state.copilotSessionId = session.sessionId;
      ctx.saveState(state);
    }
    return session;
  }

  async function turn(prompt: string, resume = false): Promise<void> {
    const s = await open(resume);
    const ended = new Promise<void>((resolve, reject) => {
      let error: string | undefined;
      const stop = () => {
        off();
        resolve();
      };
      ctx.signal.addEventListener('abort', stop, { once: true });
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
    await s.send({ prompt });
    await ended;
  }

  return {
    start: (prompt, resumed) => turn(resumed ? 'askrelay restarted; continue where you left off.' : prompt, resumed),
    send: (text) => turn(text, true),
    async stop() {
      await session?.disconnect?.().catch(() => {});
      await client.stop().catch(() => {});
    },
  };
}

// The logged-in GitHub user by default; a BYOK provider when COPILOT_PROVIDER_BASE_URL is set.
export const copilotProvider = copilotRunner({
  name: 'Copilot',
  baseUrlVar: 'COPILOT_PROVIDER_BASE_URL',
  apiKeyVar: 'COPILOT_PROVIDER_API_KEY',
  modelVar: 'COPILOT_MODEL',
  defaultModel: 'gpt-5.1',
  byokRequired: false,
});
