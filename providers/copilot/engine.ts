import { createRequire } from 'node:module';
import { CopilotClient, RuntimeConnection, type CopilotSession } from '@github/copilot-sdk';
import { agentEnv } from '../../src/sessions/agent-env.js';
import { relayGuidance } from '../../src/sessions/guidance.js';
import type { Runner, RunnerContext } from '../../src/sessions/runner.js';
import { copilotHandlers, type CopilotState } from './handlers.js';
import { resumeAfterRestart, type CopilotTurns } from './restart.js';
import { ASK_USER } from './tool.js';

// The Copilot runtime session behind a Copilot or OpenAI session (runner.ts loads this file,
// and @github/copilot-sdk with it, when such a session first runs).

export type ByokProvider = { type: 'openai'; baseUrl: string; apiKey: string };

export function copilotEngine(ctx: RunnerContext, provider: ByokProvider | undefined): Runner {
  return new CopilotRunner(ctx, provider);
}

class CopilotRunner implements Runner, CopilotTurns {
  readonly state: CopilotState;
  readonly onPermissionRequest: CopilotTurns['onPermissionRequest'];
  private readonly client: CopilotClient;
  private readonly sessionConfig: () => Record<string, unknown>;
  private session: CopilotSession | undefined;

  constructor(
    readonly ctx: RunnerContext,
    provider: ByokProvider | undefined,
  ) {
    this.state = ctx.loadState<CopilotState>() ?? {};
    const workingDirectory = ctx.env.ASKRELAY_WORKDIR ?? process.cwd();
    const formVariant = ctx.session.engine === 'extension' && ctx.session.askUserVariant === 'form';
    this.client = new CopilotClient({
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

    const { askUser, relayTools, onUserInputRequest, onPermissionRequest, onElicitationRequest } = copilotHandlers(ctx, this.state);
    this.onPermissionRequest = onPermissionRequest;
    // sdk engine: our ask_user, then the relay tool; extension engine: the relay tool only
    // (Copilot's own ask_user stays, through onUserInputRequest).
    const tools = ctx.session.engine === 'extension' ? relayTools : [askUser, ...relayTools];
    this.sessionConfig = () => ({
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
  }

  start(prompt: string, resumed: boolean): Promise<void> {
    return resumed ? resumeAfterRestart(this, prompt) : this.turn(prompt);
  }

  send(text: string): Promise<void> {
    return this.turn(text, true);
  }

  async stop(): Promise<void> {
    await this.session?.disconnect?.().catch(() => {});
    await this.client.stop().catch(() => {});
  }

  async open(resume: boolean, continuePendingWork = false): Promise<CopilotSession> {
    if (this.session) return this.session;
    if (resume && this.state.copilotSessionId) {
      this.session = await this.client.resumeSession(this.state.copilotSessionId, { ...this.sessionConfig(), continuePendingWork } as never);
    } else {
      this.session = await this.client.createSession(this.sessionConfig() as never);
      this.state.copilotSessionId = this.session.sessionId;
      this.ctx.saveState(this.state);
    }
    return this.session;
  }

  async turn(prompt: string, resume = false): Promise<void> {
    const s = await this.open(resume);
    const ended = this.idle(s);
    await s.send({ prompt });
    await ended;
  }

  /**
   * Resolves on the next session.idle (rejects if the turn reported an error), or when stopped.
   * `cancel()` stops watching (a resumed session that took no work never goes idle).
   */
  idle(s: CopilotSession): Promise<void> & { cancel(): void } {
    const { ctx } = this;
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
}

