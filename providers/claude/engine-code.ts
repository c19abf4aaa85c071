import { query, type CanUseTool, type HookCallback, type Options, type PermissionResult, type SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import type { Card, CardDraft } from '../../src/cards/model.js';
import { agentEnv } from '../../src/sessions/agent-env.js';
import { relayGuidance } from '../../src/sessions/guidance.js';
import { relayToolRestartPrompt, relayToolWaits, runRelayTool, type RelayToolResult } from '../../src/sessions/relay-tool.js';
import type { Runner, RunnerContext } from '../../src/sessions/runner.js';
import { toCardDraft, toolInputError, toUpdatedInput } from './adapter.js';
import { planApprovalDraft, planDecision, toolApprovalDraft, toolDecision } from './approvals.js';
import { RESTART_CONTINUE, restartCard } from './code-resume.js';
import { RELAY_MCP_SERVER, relayMcpServer, relayMcpToolName, relayToolOfMcpName } from './relay-tools.js';
import { clip } from '../../src/cards/text.js';
import { ASK_USER_QUESTION, EXIT_PLAN_MODE } from './tool.js';

// The `code` engine: Claude Code itself (through @anthropic-ai/claude-agent-sdk) runs the
// session. Every tool call Claude Code asks permission for reaches canUseTool and becomes a
// card: AskUserQuestion a question card answered in Claude Code's own format, ExitPlanMode
// a plan approval, anything else (Bash, Write, Edit, …) a tool approval. Each turn is one
// query(); later turns resume the Claude Code session by its id. Claude Code cannot answer
// a tool call that was pending when its process died, so after a restart the answer
// travels in the prompt of the resumed session instead (code-resume.ts, docs/providers/claude.md).
// The relay tool (ctx.relayTools) reaches Claude Code as an in-process MCP server, its tools
// named mcp__askrelay__<tool>; they run without an approval card of their own.

export interface CodeEndpoint {
  baseUrl: string;
  apiKey: string;
  model: string;
}

/** What survives a restart (ctx.saveState). */
export interface CodeEngineState {
  claudeSessionId?: string;
  /** The tool call whose card is open, so a restart can wait for it and pass its answer on. */
  pendingToolUseId?: string;
  pendingTool?: string;
  pendingInput?: Record<string, unknown>;
}

export const STOPPED_MESSAGE = 'The session was stopped.';
const STOPPED_RESULT: RelayToolResult = { text: STOPPED_MESSAGE, isError: true };
/** What the model reads (as a system-reminder) at the start of the turn after a manual-mode expiry. */
export const MANUAL_EXPIRY_STOP =
  "Nobody answered in time and askrelay is in manual mode, so the turn ended to wait for the user's next message.";

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
  const state: CodeEngineState = { ...(ctx.loadState<CodeEngineState>() ?? {}) };
  const save = () => ctx.saveState({ ...state });
  /** Tool calls that have a card: their tool_result is logged with the card's id. */
  const cardOfToolUse = new Map<string, string>();
  /** AskUserQuestion calls after which the turn ends (manual mode, nobody answered). */
  const endTurnAfter = new Set<string>();
  let current: { abort: AbortController; done: Promise<void> } | undefined;
  let interrupted = false;
  /** A tool call the user allowed while the relay was down: the model makes it again, and it runs without a second card. */
  let allowedAgain: { tool: string; input: string } | undefined;

  const approveAll = () => ctx.env.ASKRELAY_APPROVE_TOOLS === '1';

  function setPending(toolUseId: string, tool: string, input: Record<string, unknown>): void {
    Object.assign(state, { pendingToolUseId: toolUseId, pendingTool: tool, pendingInput: input });
    save();
  }

  function clearPending(toolUseId: string): void {
    if (state.pendingToolUseId !== toolUseId) return;
    delete state.pendingToolUseId;
    delete state.pendingTool;
    delete state.pendingInput;
    save();
  }

  /** Opens (or, with the same tool call id, re-attaches to) the card and waits for it. */
  async function askCard(draft: CardDraft, toolUseId: string, tool: string, input: Record<string, unknown>): Promise<Card> {
    setPending(toolUseId, tool, input);
    let card: Card;
    try {
      card = await ctx.ask({ ...draft, toolCallId: toolUseId });
    } catch (error) {
      clearPending(toolUseId); // the relay refused the card: nothing to wait for after a restart
      throw error;
    }
    cardOfToolUse.set(toolUseId, card.id);
    // Still pending means the runner was aborted (a relay shutdown): keep the pending call
    // for the restart. Anything else closed the card for good.
    if (card.status !== 'pending') clearPending(toolUseId);
    return card;
  }

  const gone = (card: Card) => card.status === 'pending' || card.status === 'cancelled' || ctx.signal.aborted;
  // The session is stopping (or the relay shutting down) while a card is open: the query
  // is being aborted. (Claude Code records the open call as rejected by the user either way;
  // after a restart the answer arrives in the resumed session's prompt.)
  const stopped = (): PermissionResult => {
    interrupted = true;
    return { behavior: 'deny', message: STOPPED_MESSAGE, interrupt: true };
  };

  async function decide(tool: string, input: Record<string, unknown>, toolUseId: string, title?: string): Promise<PermissionResult> {
    // The relay tool decides itself (start_session and watch_session ask the human).
    if (ctx.relayTools && relayToolOfMcpName(tool)) return { behavior: 'allow', updatedInput: input };
    if (tool === ASK_USER_QUESTION) {
      const parsed = toCardDraft(input);
      if (!parsed.ok) return { behavior: 'deny', message: toolInputError(parsed.error) };
      const card = await askCard(parsed.draft, toolUseId, tool, input);
      if (gone(card)) return stopped();
      if (card.status === 'expired' && ctx.session.relayMode === 'manual') endTurnAfter.add(toolUseId);
      return { behavior: 'allow', updatedInput: toUpdatedInput(parsed.input, card) };
    }
    if (tool === EXIT_PLAN_MODE) {
      const card = await askCard(planApprovalDraft(input), toolUseId, tool, input);
      if (gone(card)) return stopped();
      return planDecision(input, card);
    }
    if (approveAll()) return { behavior: 'allow', updatedInput: input };
    if (allowedAgain?.tool === tool && allowedAgain.input === JSON.stringify(input)) {
      allowedAgain = undefined;
      return { behavior: 'allow', updatedInput: input };
    }
    const card = await askCard(toolApprovalDraft(tool, input, title), toolUseId, tool, input);
    if (gone(card)) return stopped();
    return toolDecision(input, card);
  }

  const canUseTool: CanUseTool = async (tool, input, options) => {
    try {
      ctx.heartbeat();
      return await decide(tool, input, options.toolUseID, options.title);
    } catch (error) {
      if (ctx.signal.aborted) return stopped();
      const message = error instanceof Error ? error.message : String(error);
      ctx.log('system', `askrelay could not show the ${tool} call as a card: ${message}`);
      return { behavior: 'deny', message: `askrelay could not show this ${tool} call to the user: ${message}` };
    }
  };

  // Manual mode, nobody answered: the tool_result is recorded, then the turn ends here
  // instead of going back to the model (no extra model request, the session goes idle).
  const endTurnHook: HookCallback = async (_input, toolUseId) => {
    if (!toolUseId || !endTurnAfter.delete(toolUseId)) return {};
    return { continue: false, stopReason: MANUAL_EXPIRY_STOP };
  };

  /**
   * A relay tool call from Claude Code; one that may wait on the human is kept for a restart.
   * Undefined when aborted (a shutdown) meanwhile: the pending call stays for the restart.
   */
  async function callRelayTool(name: string, args: unknown, toolUseId: string | undefined): Promise<RelayToolResult | undefined> {
    const keep = toolUseId !== undefined && relayToolWaits(name);
    if (keep) setPending(toolUseId, relayMcpToolName(name), (args && typeof args === 'object' ? args : {}) as Record<string, unknown>);
    const result = await runRelayTool(ctx, name, args, { toolCallId: toolUseId });
    if (result && keep) clearPending(toolUseId);
    return result;
  }

  function relayToolOptions(): Partial<Options> {
    const relayTools = ctx.relayTools;
    if (!relayTools) return {};
    return {
      // A fresh server per query: an MCP server instance serves one connection.
      // No allowedTools entry: canUseTool allows these itself (decide()), so it stays the one
      // gate for every tool (the SDK warns that allowedTools would shadow it).
      // A call that comes back undefined was stopped: the query is being aborted, nobody reads it.
      mcpServers: { [RELAY_MCP_SERVER]: relayMcpServer(relayTools.definitions, async (...call) => (await callRelayTool(...call)) ?? STOPPED_RESULT) },
    };
  }

  function options(abort: AbortController, resume: string | undefined, stderr: { tail: string }): Options {
    return {
      ...relayToolOptions(),
      model: endpoint.model,
      cwd: ctx.env.ASKRELAY_WORKDIR ?? process.cwd(),
      permissionMode: 'default',
      settingSources: [],
      systemPrompt: { type: 'preset', preset: 'claude_code', append: relayGuidance(ASK_USER_QUESTION, ctx.session.relayMode) },
      env: codeEngineEnv(ctx.env, endpoint),
      abortController: abort,
      canUseTool,
      hooks: { PostToolUse: [{ matcher: ASK_USER_QUESTION, hooks: [endTurnHook] }] },
      stderr: (data) => {
        stderr.tail = (stderr.tail + data).slice(-STDERR_CHARS);
      },
      ...(resume ? { resume } : {}),
    };
  }

  function onMessage(message: SDKMessage): void {
    ctx.heartbeat();
    if ('session_id' in message && typeof message.session_id === 'string' && message.session_id && message.session_id !== state.claudeSessionId) {
      state.claudeSessionId = message.session_id;
      save();
    }
    if (message.type === 'assistant' && message.parent_tool_use_id === null) {
      for (const block of message.message.content) {
        if (block.type === 'text' && block.text.trim()) ctx.log('assistant', block.text);
      }
    } else if (message.type === 'user' && message.parent_tool_use_id === null && Array.isArray(message.message.content)) {
      for (const block of message.message.content) {
        if (block.type !== 'tool_result') continue;
        const cardId = cardOfToolUse.get(block.tool_use_id);
        if (!cardId) continue;
        cardOfToolUse.delete(block.tool_use_id);
        ctx.log('tool', clip(contentText(block.content), LOG_CHARS), cardId);
      }
    } else if (message.type === 'result' && !interrupted && !ctx.signal.aborted) {
      if (message.subtype !== 'success') {
        const why = message.errors.map((e) => e.trim()).filter(Boolean).join('; ');
        throw new ResultError(`Claude Code ended the turn with ${message.subtype}${why ? `: ${why}` : ''}`);
      }
      if (message.is_error) throw new ResultError(`Claude Code reported an error: ${message.result || 'no details'}`);
    }
  }

  async function run(turn: Turn): Promise<void> {
    if (ctx.signal.aborted) return;
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const stderr = { tail: '' };
    interrupted = false;
    const work = (async () => {
      try {
        for await (const message of query({ prompt: turn.prompt, options: options(abort, turn.resume, stderr) })) onMessage(message);
      } catch (error) {
        if (ctx.signal.aborted || abort.signal.aborted || interrupted) return;
        const message = error instanceof Error ? error.message : String(error);
        const detail = stderr.tail.trim() ? ` (Claude Code said: ${stderr.tail.trim().split('\n').slice(-3).join(' | ')})` : '';
        throw new Error(error instanceof ResultError ? message + detail : `Claude Code failed: ${message}${detail}`);
      } finally {
        ctx.signal.removeEventListener('abort', onAbort);
      }
    })();
    current = { abort, done: work.catch(() => {}) };
    try {
      await work;
    } finally {
      if (current?.abort === abort) current = undefined;
    }
  }

  /** After a restart: waits for the card that was open, then resumes with its answer in the prompt. */
  async function resumeAfterRestart(prompt: string): Promise<void> {
    const sessionId = state.claudeSessionId;
    if (!sessionId) return run({ prompt });
    const { pendingToolUseId: id, pendingTool: tool, pendingInput: input } = state;
    if (!id || !tool || !input) return run({ prompt: RESTART_CONTINUE, resume: sessionId });
    const relayTool = relayToolOfMcpName(tool);
    if (relayTool) {
      if (!ctx.relayTools) {
        clearPending(id);
        return run({ prompt: RESTART_CONTINUE, resume: sessionId });
      }
      // Made again: an approval card re-attaches through the tool call id and is waited for.
      const result = await callRelayTool(relayTool, input, id);
      if (!result) return;
      return run({ prompt: relayToolRestartPrompt(relayTool, result), resume: sessionId });
    }
    const pending = restartCard(tool, input);
    if (!pending) {
      clearPending(id);
      return run({ prompt: RESTART_CONTINUE, resume: sessionId });
    }
    const card = await askCard(pending.draft, id, tool, input);
    if (gone(card)) return;
    const { text, allowAgain } = pending.answer(card);
    if (allowAgain) allowedAgain = { tool, input: JSON.stringify(input) };
    cardOfToolUse.delete(id);
    ctx.log('tool', clip(text, LOG_CHARS), card.id);
    return run({ prompt: text, resume: sessionId });
  }

  return {
    async start(prompt, resumed) {
      if (resumed) return resumeAfterRestart(prompt);
      return run({ prompt, resume: state.claudeSessionId });
    },
    async send(text) {
      return run({ prompt: text, resume: state.claudeSessionId });
    },
    async stop() {
      const running = current;
      running?.abort.abort();
      await running?.done;
    },
  };
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
