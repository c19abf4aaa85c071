import type { PermissionResult } from '@anthropic-ai/claude-agent-sdk';
import { LIMITS, type Card, type CardDraft } from '../../src/cards/model.js';
import { clip } from '../../src/cards/text.js';
import { isRecord } from './text.js';
import { EXIT_PLAN_MODE } from './tool.js';

// Approval cards for the code engine, pure: ExitPlanMode's plan approval and the approval of
// any other tool Claude Code asks permission for (Bash, Write, Edit, …). A human answers
// them, never an agent; a closed card becomes canUseTool's result here.

// ---- ExitPlanMode: plan approval -------------------------------------------------------

export const PLAN_APPROVE = 'Approve';
export const PLAN_KEEP_PLANNING = 'Keep planning';
const PLAN_PROMPT = 'Approve this plan?\n\n';
const EMPTY_PLAN = '(the plan file is empty)';

function planText(input: unknown): string {
  const record = isRecord(input) ? input : {};
  const plan = typeof record.plan === 'string' && record.plan.trim() ? record.plan : EMPTY_PLAN;
  const full = PLAN_PROMPT + plan;
  if (full.length <= LIMITS.textChars) return full;
  // A card holds at most LIMITS.textChars; say where the rest is instead of hiding the cut.
  const path = typeof record.planFilePath === 'string' && record.planFilePath.length <= 500 ? record.planFilePath : undefined;
  const note = `\n\n[The plan is cut here: it is longer than a card can show.${path ? ` The whole plan is in ${path}.` : ''}]`;
  return clip(full, LIMITS.textChars - note.length) + note;
}

/** The approval card for Claude Code's ExitPlanMode (`input.plan` is filled in by Claude Code). */
export function planApprovalDraft(input: unknown): CardDraft {
  return {
    layout: 'steps',
    tool: EXIT_PLAN_MODE,
    origin: 'native',
    kind: 'approval',
    questions: [
      {
        id: 'plan',
        header: 'Plan',
        text: planText(input),
        options: [
          { label: PLAN_APPROVE, description: 'Leave plan mode and start working' },
          { label: PLAN_KEEP_PLANNING, description: 'Stay in plan mode; say what to change in the text box' },
        ],
        multiSelect: false,
        freeText: true,
      },
    ],
  };
}

export type PlanDecision = { behavior: 'allow'; updatedInput: Record<string, unknown> } | { behavior: 'deny'; message: string };

/** canUseTool's result for ExitPlanMode once its approval card is closed. */
export function planDecision(input: Record<string, unknown>, card: Card): PlanDecision {
  const entry = card.status === 'answered' ? card.answer?.plan : undefined;
  const text = entry?.text?.trim() || undefined;
  // "Keep planning" wins over "Approve" should both ever be picked: not leaving plan mode is the safe side.
  if (entry?.selected.includes(PLAN_KEEP_PLANNING)) {
    return { behavior: 'deny', message: `The user wants to keep planning.${text ? ` Their feedback: ${text}` : ''}` };
  }
  if (entry?.selected.includes(PLAN_APPROVE)) return { behavior: 'allow', updatedInput: input };
  if (text) return { behavior: 'deny', message: `The user wants changes to the plan: ${text}` };
  return { behavior: 'deny', message: 'The user did not approve the plan.' };
}

// ---- Any other tool: allow or deny -----------------------------------------------------

export const DENIED_MESSAGE = 'The user denied this tool use.';

const SUMMARY_CHARS = 1500;

const str = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** A readable account of what the tool is about to do, at most ~1500 characters. */
export function summarizeToolInput(tool: string, input: Record<string, unknown>): string {
  const command = str(input.command);
  const path = str(input.file_path) ?? str(input.notebook_path) ?? str(input.path);
  let text: string;
  if (command !== undefined) {
    const description = str(input.description);
    text = `${description ? `${description}\n` : ''}$ ${command}`;
  } else if (path !== undefined) {
    const lines = [path];
    const content = str(input.content);
    const oldString = str(input.old_string);
    const newString = str(input.new_string);
    if (oldString !== undefined || newString !== undefined) lines.push('', `- ${oldString ?? ''}`, `+ ${newString ?? ''}`);
    else if (content !== undefined) lines.push('', content);
    text = lines.join('\n');
  } else if (str(input.url) !== undefined) {
    text = [str(input.url), str(input.prompt)].filter(Boolean).join('\n');
  } else {
    text = JSON.stringify(input, null, 2) ?? '';
  }
  return clip(text || tool, SUMMARY_CHARS);
}

export function toolApprovalDraft(tool: string, input: Record<string, unknown>, title?: string): CardDraft {
  return {
    kind: 'approval',
    tool,
    origin: 'native',
    ...(title ? { title: clip(title, 200) } : {}),
    questions: [
      {
        id: 'approve',
        header: clip(tool, 60),
        text: `Allow ${tool}?\n\n${summarizeToolInput(tool, input)}`,
        options: [{ label: 'Allow' }, { label: 'Deny' }],
        multiSelect: false,
      },
    ],
  };
}

export function toolDecision(input: Record<string, unknown>, card: Card): PermissionResult {
  const entry = card.status === 'answered' ? Object.values(card.answer ?? {})[0] : undefined;
  if (entry?.selected.includes('Allow')) return { behavior: 'allow', updatedInput: input };
  if (card.status === 'expired') {
    const then = card.relayMode === 'manual' ? " Stop and wait for the user's next message." : '';
    return { behavior: 'deny', message: `Nobody answered in time, so the tool use was not allowed.${then}` };
  }
  const said = entry?.text?.trim();
  return { behavior: 'deny', message: said ? `${DENIED_MESSAGE} The user said: ${said}` : DENIED_MESSAGE };
}
