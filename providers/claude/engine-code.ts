import { query, type Options, type SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import { agentEnv } from '../../src/sessions/agent-env.js';
import { relayGuidance } from '../../src/sessions/guidance.js';
import { relayToolRestartPrompt } from '../../src/sessions/relay-tool.js';
import type { Runner, RunnerContext } from '../../src/sessions/runner.js';
import { CodeToolCalls, STOPPED_RESULT } from './code-tool-calls.js';
import { RESTART_CONTINUE, restartCard } from './code-resume.js';
import { RELAY_MCP_SERVER, relayMcpServer, relayToolOfMcpName } from './relay-tools.js';
import { clip } from '../../src/cards/text.js';
import { ASK_USER_QUESTION } from './tool.js';

// The `code` engine: Claude Code itself (through @anthropic-ai/claude-agent-sdk) runs the
// session. Every tool call Claude Code asks permission for reaches canUseTool and becomes a
// card: AskUserQuestion a question card answered in Claude Code's own format, ExitPlanMode
// a plan approval, anything else (Bash, Write, Edit, …) a tool approval. Each turn is one
// query(); later turns resume the Claude Code session by its id. Claude Code cannot answer
// a tool call that was pending when its process died, so after a restart the answer
// travels in the prompt of the resumed session instead (code-resume.ts, docs/providers/claude.md).
// The relay tool (ctx.relayTools) reaches Claude Code as an in-process MCP server, its tools
// named mcp__askrelay__<tool>; they run without an approval card of their own. The tool
// calls and their cards are code-tool-calls.ts; here, the turns.

export interface CodeEndpoint {
  baseUrl: string;
  apiKey: string;
  model: string;
}

const LOG_CHARS = 4000;
const STDERR_CHARS = 2000;

/**
 * The environment Claude Code runs with. `env` replaces the whole environment, so the
 * agent's (agentEnv: the relay's own without the operator's ASKRELAY_* settings, plus the
 * session's ASKRELAY_TOKEN and ASKRELAY_URL) is passed on, plus the endpoint and the
 * switches that keep Claude Code from calling anything but the model.
 */
export function codeEngineEnv(env: NodeJS.ProcessEnv, endpoint: CodeEndpoint): Record<string, string> {
  return {
    ...agentEnv(env),
    ANTHROPIC_BASE_URL: endpoint.baseUrl,
    ANTHROPIC_API_KEY: endpoint.apiKey,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
  };
}

type Turn = { prompt: string; resume?: string };

export function codeEngine(ctx: RunnerContext, endpoint: CodeEndpoint): Runner {
  return new CodeRunner(ctx, endpoint);
}

class CodeRunner implements Runner {
  private readonly calls: CodeToolCalls;
  private current: { abort: AbortController; done: Promise<void> } | undefined;

  constructor(
    private readonly ctx: RunnerContext,
    private readonly endpoint: CodeEndpoint,
  ) {
    this.calls = new CodeToolCalls(ctx);
  }

  async start(prompt: string, resumed: boolean): Promise<void> {
    if (resumed) return this.resumeAfterRestart(prompt);
    return this.run({ prompt, resume: this.calls.state.claudeSessionId });
  }

  async send(text: string): Promise<void> {
    return this.run({ prompt: text, resume: this.calls.state.claudeSessionId });
  }

  async stop(): Promise<void> {
    const running = this.current;
    running?.abort.abort();
    await running?.done;
  }

  private relayToolOptions(): Partial<Options> {
    const relayTools = this.ctx.relayTools;
    if (!relayTools) return {};
    return {
      // A fresh server per query: an MCP server instance serves one connection.
      // No allowedTools entry: canUseTool allows these itself (CodeToolCalls.decide()), so it
      // stays the one gate for every tool (the SDK warns that allowedTools would shadow it).
      // A call that comes back undefined was stopped: the query is being aborted, nobody reads it.
      mcpServers: { [RELAY_MCP_SERVER]: relayMcpServer(relayTools.definitions, async (...call) => (await this.calls.callRelayTool(...call)) ?? STOPPED_RESULT) },
    };
  }

  private options(abort: AbortController, resume: string | undefined, stderr: { tail: string }): Options {
    const { ctx, endpoint } = this;
    return {
      ...this.relayToolOptions(),
      model: endpoint.model,
      cwd: ctx.env.ASKRELAY_WORKDIR ?? process.cwd(),
      permissionMode: 'default',
      settingSources: [],
      systemPrompt: { type: 'preset', preset: 'claude_code', append: relayGuidance(ASK_USER_QUESTION, ctx.session.relayMode) },
      env: codeEngineEnv(ctx.env, endpoint),
      abortController: abort,
      canUseTool: this.calls.canUseTool,
      hooks: { PostToolUse: [{ matcher: ASK_USER_QUESTION, hooks: [this.calls.endTurnHook] }] },
      stderr: (data) => {
        stderr.tail = (stderr.tail + data).slice(-STDERR_CHARS);
      },
      ...(resume ? { resume } : {}),
    };
  }

  private onMessage(message: SDKMessage): void {
    const { ctx, calls } = this;
    ctx.heartbeat();
    if ('session_id' in message && typeof message.session_id === 'string' && message.session_id && message.session_id !== calls.state.claudeSessionId) {
      calls.state.claudeSessionId = message.session_id;
      calls.save();
    }
    if (message.type === 'assistant' && message.parent_tool_use_id === null) {
      for (const block of message.message.content) {
        if (block.type === 'text' && block.text.trim()) ctx.log('assistant', block.text);
      }
    } else if (message.type === 'user' && message.parent_tool_use_id === null && Array.isArray(message.message.content)) {
      for (const block of message.message.content) {
        if (block.type !== 'tool_result') continue;
        const cardId = calls.cardOfToolUse.get(block.tool_use_id);
        if (!cardId) continue;
        calls.cardOfToolUse.delete(block.tool_use_id);
        ctx.log('tool', clip(contentText(block.content), LOG_CHARS), cardId);
      }
    } else if (message.type === 'result' && !calls.interrupted && !ctx.signal.aborted) {
      if (message.subtype !== 'success') {
        const why = message.errors.map((e) => e.trim()).filter(Boolean).join('; ');
        throw new ResultError(`Claude Code ended the turn with ${message.subtype}${why ? `: ${why}` : ''}`);
      }
      if (message.is_error) throw new ResultError(`Claude Code reported an error: ${message.result || 'no details'}`);
    }
  }

  private async run(turn: Turn): Promise<void> {
    const { ctx, calls } = this;
    if (ctx.signal.aborted) return;
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const stderr = { tail: '' };
    calls.interrupted = false;
    const work = (async () => {
      try {
        for await (const message of query({ prompt: turn.prompt, options: this.options(abort, turn.resume, stderr) })) this.onMessage(message);
      } catch (error) {
        if (ctx.signal.aborted || abort.signal.aborted || calls.interrupted) return;
        const message = error instanceof Error ? error.message : String(error);
        const detail = stderr.tail.trim() ? ` (Claude Code said: ${stderr.tail.trim().split('\n').slice(-3).join(' | ')})` : '';
        throw new Error(error instanceof ResultError ? message + detail : `Claude Code failed: ${message}${detail}`);
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
      }
    })();
    this.current = { abort, done: work.catch(() => {}) };
    try {
      await work;
    } finally {
      if (this.current?.abort === abort) this.current = undefined;
    }
  }

  /** After a restart: waits for the card that was open, then resumes with its answer in the prompt. */
  private async resumeAfterRestart(prompt: string): Promise<void> {
    const { ctx, calls } = this;
    const sessionId = calls.state.claudeSessionId;
    if (!sessionId) return this.run({ prompt });
    const { pendingToolUseId: id, pendingTool: tool, pendingInput: input } = calls.state;
    if (!id || !tool || !input) return this.run({ prompt: RESTART_CONTINUE, resume: sessionId });
    const relayTool = relayToolOfMcpName(tool);
    if (relayTool) {
      if (!ctx.relayTools) {
        calls.clearPending(id);
        return this.run({ prompt: RESTART_CONTINUE, resume: sessionId });
      }
      // Made again: an approval card re-attaches through the tool call id and is waited for.
      const result = await calls.callRelayTool(relayTool, input, id);
      if (!result) return;
      return this.run({ prompt: relayToolRestartPrompt(relayTool, result), resume: sessionId });
    }
    const pending = restartCard(tool, input);
    if (!pending) {
      calls.clearPending(id);
      return this.run({ prompt: RESTART_CONTINUE, resume: sessionId });
    }
    const card = await calls.askCard(pending.draft, id, tool, input);
    if (calls.gone(card)) return;
    const { text, allowAgain } = pending.answer(card);
    if (allowAgain) calls.allowedAgain = { tool, input: JSON.stringify(input) };
    calls.cardOfToolUse.delete(id);
    ctx.log('tool', clip(text, LOG_CHARS), card.id);
    return this.run({ prompt: text, resume: sessionId });
  }
}

/** A turn that Claude Code itself ended with an error `result` (as opposed to the process failing). */
class ResultError extends Error {}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((block): block is { type: 'text'; text: string } => block?.type === 'text' && typeof block.text === 'string')
    .map((block) => block.text)
    .join('\n\n');
}
