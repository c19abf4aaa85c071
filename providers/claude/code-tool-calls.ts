import type { CanUseTool, HookCallback, PermissionResult } from '@anthropic-ai/claude-agent-sdk';
import type { Card, CardDraft } from '../../src/cards/model.js';
import { relayToolWaits, runRelayTool, type RelayToolResult } from '../../src/sessions/relay-tool.js';
import type { RunnerContext } from '../../src/sessions/runner.js';
import { toCardDraft, toolInputError, toUpdatedInput } from './adapter.js';
import { planApprovalDraft, planDecision, toolApprovalDraft, toolDecision } from './approvals.js';
import { relayMcpToolName, relayToolOfMcpName } from './relay-tools.js';
import { ASK_USER_QUESTION, EXIT_PLAN_MODE } from './tool.js';

// The `code` engine's tool calls (engine-code.ts): Claude Code asks canUseTool before each,
// and the call becomes a card (AskUserQuestion a question, ExitPlanMode a plan approval,
// anything else a tool approval) or runs at once (the relay tool, which asks the human
// itself). The call whose card is open is saved (ctx.saveState), so a restart can wait for
// the card and pass its answer on.

/** What survives a restart (ctx.saveState). */
export interface CodeEngineState {
  claudeSessionId?: string;
  /** The tool call whose card is open, so a restart can wait for it and pass its answer on. */
  pendingToolUseId?: string;
  pendingTool?: string;
  pendingInput?: Record<string, unknown>;
}

export const STOPPED_MESSAGE = 'The session was stopped.';
export const STOPPED_RESULT: RelayToolResult = { text: STOPPED_MESSAGE, isError: true };
/** What the model reads (as a system-reminder) at the start of the turn after a manual-mode expiry. */
export const MANUAL_EXPIRY_STOP =
  "Nobody answered in time and askrelay is in manual mode, so the turn ended to wait for the user's next message.";

export class CodeToolCalls {
  readonly state: CodeEngineState;
  /** Tool calls that have a card: their tool_result is logged with the card's id. */
  readonly cardOfToolUse = new Map<string, string>();
  /** AskUserQuestion calls after which the turn ends (manual mode, nobody answered). */
  private readonly endTurnAfter = new Set<string>();
  /** The turn was interrupted because the session is stopping while a card was open. */
  interrupted = false;
  /** A tool call the user allowed while the relay was down: the model makes it again, and it runs without a second card. */
  allowedAgain: { tool: string; input: string } | undefined;

  constructor(private readonly ctx: RunnerContext) {
    this.state = { ...(ctx.loadState<CodeEngineState>() ?? {}) };
  }

  save(): void {
    this.ctx.saveState({ ...this.state });
  }

  setPending(toolUseId: string, tool: string, input: Record<string, unknown>): void {
    Object.assign(this.state, { pendingToolUseId: toolUseId, pendingTool: tool, pendingInput: input });
    this.save();
  }

  clearPending(toolUseId: string): void {
    if (this.state.pendingToolUseId !== toolUseId) return;
    delete this.state.pendingToolUseId;
    delete this.state.pendingTool;
    delete this.state.pendingInput;
    this.save();
  }

  /** Opens (or, with the same tool call id, re-attaches to) the card and waits for it. */
  async askCard(draft: CardDraft, toolUseId: string, tool: string, input: Record<string, unknown>): Promise<Card> {
    this.setPending(toolUseId, tool, input);
    let card: Card;
    try {
      card = await this.ctx.ask({ ...draft, toolCallId: toolUseId });
    } catch (error) {
      this.clearPending(toolUseId); // the relay refused the card: nothing to wait for after a restart
      throw error;
    }
    this.cardOfToolUse.set(toolUseId, card.id);
    // Still pending means the runner was aborted (a relay shutdown): keep the pending call
    // for the restart. Anything else closed the card for good.
    if (card.status !== 'pending') this.clearPending(toolUseId);
    return card;
  }

  gone(card: Card): boolean {
    return card.status === 'pending' || card.status === 'cancelled' || this.ctx.signal.aborted;
  }

  /**
   * A relay tool call from Claude Code; one that may wait on the human is kept for a restart.
   * Undefined when aborted (a shutdown) meanwhile: the pending call stays for the restart.
   */
  async callRelayTool(name: string, args: unknown, toolUseId: string | undefined): Promise<RelayToolResult | undefined> {
    const keep = toolUseId !== undefined && relayToolWaits(name);
    if (keep) this.setPending(toolUseId, relayMcpToolName(name), (args && typeof args === 'object' ? args : {}) as Record<string, unknown>);
    const result = await runRelayTool(this.ctx, name, args, { toolCallId: toolUseId });
    if (result && keep) this.clearPending(toolUseId);
    return result;
  }

  readonly canUseTool: CanUseTool = async (tool, input, options) => {
    try {
      this.ctx.heartbeat();
      return await this.decide(tool, input, options.toolUseID, options.title);
    } catch (error) {
      if (this.ctx.signal.aborted) return this.stopped();
      const message = error instanceof Error ? error.message : String(error);
      this.ctx.log('system', `askrelay could not show the ${tool} call as a card: ${message}`);
      return { behavior: 'deny', message: `askrelay could not show this ${tool} call to the user: ${message}` };
    }
  };

  // Manual mode, nobody answered: the tool_result is recorded, then the turn ends here
  // instead of going back to the model (no extra model request, the session goes idle).
  readonly endTurnHook: HookCallback = async (_input, toolUseId) => {
    if (!toolUseId || !this.endTurnAfter.delete(toolUseId)) return {};
    return { continue: false, stopReason: MANUAL_EXPIRY_STOP };
  };

  // The session is stopping (or the relay shutting down) while a card is open: the query
  // is being aborted. (Claude Code records the open call as rejected by the user either way;
  // after a restart the answer arrives in the resumed session's prompt.)
  private stopped(): PermissionResult {
    this.interrupted = true;
    return { behavior: 'deny', message: STOPPED_MESSAGE, interrupt: true };
  }

  private async decide(tool: string, input: Record<string, unknown>, toolUseId: string, title?: string): Promise<PermissionResult> {
    // The relay tool decides itself (start_session and watch_session ask the human).
    if (this.ctx.relayTools && relayToolOfMcpName(tool)) return { behavior: 'allow', updatedInput: input };
    if (tool === ASK_USER_QUESTION) {
      const parsed = toCardDraft(input);
      if (!parsed.ok) return { behavior: 'deny', message: toolInputError(parsed.error) };
      const card = await this.askCard(parsed.draft, toolUseId, tool, input);
      if (this.gone(card)) return this.stopped();
      if (card.status === 'expired' && this.ctx.session.relayMode === 'manual') this.endTurnAfter.add(toolUseId);
      return { behavior: 'allow', updatedInput: toUpdatedInput(parsed.input, card) };
    }
    if (tool === EXIT_PLAN_MODE) {
      const card = await this.askCard(planApprovalDraft(input), toolUseId, tool, input);
      if (this.gone(card)) return this.stopped();
      return planDecision(input, card);
    }
    if (this.ctx.env.ASKRELAY_APPROVE_TOOLS === '1') return { behavior: 'allow', updatedInput: input };
    if (this.allowedAgain?.tool === tool && this.allowedAgain.input === JSON.stringify(input)) {
      this.allowedAgain = undefined;
      return { behavior: 'allow', updatedInput: input };
    }
    const card = await this.askCard(toolApprovalDraft(tool, input, title), toolUseId, tool, input);
    if (this.gone(card)) return this.stopped();
    return toolDecision(input, card);
  }
}
