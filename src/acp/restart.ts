import type { RequestPermissionRequest } from '@agentclientprotocol/sdk';
import type { ElicitationRequest } from '../cards/elicitation-form.js';
import { formResult } from '../cards/elicitation-form.js';
import type { Card, CardDraft } from '../cards/model.js';
import { permissionOutcome } from './permission.js';

// A card that was open when the relay stopped. The agent's process ended with the relay, and
// with it the request the card answered, so after the restart the agent picks its session up
// again (session/load) and is told in a prompt what came of its question. Pure.

export type PendingAsk =
  | { kind: 'permission'; draft: CardDraft; request: RequestPermissionRequest }
  | { kind: 'elicitation'; draft: CardDraft; request: ElicitationRequest }
  /** The ask tool of askrelay's MCP server (ask-mcp-server.ts). */
  | { kind: 'tool'; draft: CardDraft; tool: string };

/** What the ask tool would have answered, as text (its result's text parts). */
export type ToolResultText = (card: Card) => string;

const RESTARTED = 'askrelay restarted while your request was open, so the tool call that made it has ended.';

export function restartPrompt(pending: PendingAsk, card: Card, toolResult?: ToolResultText): string {
  if (pending.kind === 'tool') return `${RESTARTED} You asked the user with ${pending.tool}. ${toolResult?.(card) ?? `The card ended ${card.status}.`}`;
  if (pending.kind === 'permission') {
    const outcome = permissionOutcome(pending.request, card).outcome;
    const what = pending.request.toolCall.title?.trim() || 'the tool call';
    if (outcome.outcome === 'selected') {
      const option = pending.request.options.find((o) => o.optionId === outcome.optionId)!;
      const allowed = option.kind.startsWith('allow');
      return `${RESTARTED} You asked for permission for: ${what}. The user chose "${option.name}", so it is ${allowed ? 'allowed: run it again' : 'not allowed'}.`;
    }
    return `${RESTARTED} You asked for permission for: ${what}. Nobody allowed it; do not run it.`;
  }
  const result = formResult(pending.request, card);
  const asked = String(pending.request.message ?? '').trim();
  const intro = `${RESTARTED} You asked the user${asked ? `: ${asked}` : ' a question'}.`;
  if (result.action === 'accept') {
    const answers = Object.entries(result.content).map(([key, value]) => `${key}=${Array.isArray(value) ? value.join(', ') : String(value)}`);
    return `${intro} The user answered: ${answers.join('; ')}.`;
  }
  return result.action === 'decline' ? `${intro} The user declined to answer.` : `${intro} Nobody answered in time.`;
}
