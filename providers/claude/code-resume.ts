import type { Card, CardDraft } from '../../src/cards/model.js';
import { toCardDraft, toToolResult } from './adapter.js';
import { planApprovalDraft, planDecision, toolApprovalDraft, toolDecision } from './approvals.js';
import { ASK_USER_QUESTION, EXIT_PLAN_MODE } from './tool.js';

// The code engine after a restart. Claude Code cannot answer a tool call that was pending
// when its process died, so the relay reopens the call's card and, once it is closed, the
// answer travels in the prompt of the resumed Claude Code session instead. Pure: the
// engine opens the card, logs and runs the turn.

export const RESTART_ANSWER_PREFIX = "(askrelay restarted while your question was open. The user's answer:)";
export const RESTART_CONTINUE = 'askrelay restarted; continue where you left off.';

export interface RestartAnswer {
  /** The prompt of the resumed session. */
  text: string;
  /** The user allowed the tool call: the model makes it again, and it runs without a second card. */
  allowAgain: boolean;
}

/** The card to reopen for a pending tool call, and how its answer becomes the resumed session's prompt. */
export interface RestartCard {
  draft: CardDraft;
  answer(card: Card): RestartAnswer;
}

/** The pending call's card; undefined when its input cannot become one (the session then just continues). */
export function restartCard(tool: string, input: Record<string, unknown>): RestartCard | undefined {
  if (tool === ASK_USER_QUESTION) {
    const parsed = toCardDraft(input);
    if (!parsed.ok) return undefined;
    return {
      draft: parsed.draft,
      answer: (card) => ({ text: `${RESTART_ANSWER_PREFIX}\n${toToolResult(parsed.input, card)}`, allowAgain: false }),
    };
  }
  const plan = tool === EXIT_PLAN_MODE;
  return {
    draft: plan ? planApprovalDraft(input) : toolApprovalDraft(tool, input),
    answer: (card) => {
      const decision = plan ? planDecision(input, card) : toolDecision(input, card);
      const what = plan ? 'your plan was waiting for approval' : `your ${tool} call was waiting for approval`;
      const verdict =
        decision.behavior === 'allow'
          ? plan
            ? 'The user approved your plan. You can now start coding.'
            : `The user allowed it: make the ${tool} call again.`
          : decision.message;
      return { text: `(askrelay restarted while ${what}.)\n${verdict}`, allowAgain: decision.behavior === 'allow' && !plan };
    },
  };
}
