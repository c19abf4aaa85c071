import type { PermissionOption, RequestPermissionRequest, RequestPermissionResponse, ToolCallContent } from '@agentclientprotocol/sdk';
import { shownLabels, shownText } from '../cards/draft.js';
import { LIMITS, type Card, type CardDraft } from '../cards/model.js';
import { clip } from '../cards/text.js';

// An ACP agent's session/request_permission as an approval card (a human answers it, never
// an agent), and the card back as the agent's outcome. Pure. One button per offered option,
// labelled with its name, in the agent's order, its kind (allow once, allow always, reject)
// shown beneath; an answer selects that option, anything else (skipped, expired, the session
// stopped) is `cancelled`, which every agent reads as "not allowed".

const KIND_TEXT: Record<PermissionOption['kind'], string> = {
  allow_once: 'Allow once',
  allow_always: 'Allow always',
  reject_once: 'Reject',
  reject_always: 'Reject always',
};

const SUMMARY_CHARS = 1500;
export const PERMISSION_QUESTION = 'permission';
const CANCELLED: RequestPermissionResponse = { outcome: { outcome: 'cancelled' } };

/** The labels the card shows, one per option the agent offers, as shownLabels shapes them (unique, not empty). */
function labelsOf(options: readonly PermissionOption[]): (string | undefined)[] {
  return shownLabels(options.map((o) => o.name || KIND_TEXT[o.kind] || o.optionId));
}

/** What the tool call is about to do, in words: its title, then its command, diff or text. */
function summary(request: RequestPermissionRequest): string {
  const call = request.toolCall;
  const lines: string[] = [];
  const raw = call.rawInput && typeof call.rawInput === 'object' ? (call.rawInput as Record<string, unknown>) : undefined;
  const command = raw?.command ?? raw?.cmd;
  if (typeof command === 'string') lines.push(`$ ${command}`);
  else if (Array.isArray(command)) lines.push(`$ ${command.map(String).join(' ')}`);
  for (const item of call.content ?? []) lines.push(contentText(item));
  for (const where of call.locations ?? []) lines.push(where.line ? `${where.path}:${where.line}` : where.path);
  if (!lines.length && raw) lines.push(JSON.stringify(raw, null, 2));
  return clip(lines.filter(Boolean).join('\n\n'), SUMMARY_CHARS);
}

function contentText(item: ToolCallContent): string {
  if (item.type === 'diff') return `${item.path}\n${item.oldText ? `- ${item.oldText}\n` : ''}+ ${item.newText}`;
  if (item.type === 'content') return item.content.type === 'text' ? item.content.text : `[${item.content.type}]`;
  return '';
}

/** The approval card for a permission request of `agent` ("Codex", "Gemini CLI"). */
export function permissionDraft(request: RequestPermissionRequest, agent: string): CardDraft {
  const call = request.toolCall;
  const labels = labelsOf(request.options);
  const what = call.title?.trim() || call.kind || 'use a tool';
  const body = summary(request);
  return {
    kind: 'approval',
    tool: `permission:${call.kind ?? 'other'}`,
    origin: 'native',
    layout: 'steps',
    title: shownText(`${agent} asks for permission`, LIMITS.titleChars, 'Permission'),
    questions: [
      {
        id: PERMISSION_QUESTION,
        header: shownText(call.kind ?? 'tool', 12, 'tool'),
        text: shownText(`${what}${body ? `\n\n${body}` : ''}`, LIMITS.textChars, what),
        options: request.options.flatMap((o, i) => (labels[i] === undefined ? [] : [{ label: labels[i]!, description: KIND_TEXT[o.kind] ?? o.kind }])),
        multiSelect: false,
        freeText: false,
      },
    ],
  };
}

/** The outcome for a closed (or, after a stop, still pending) approval card. */
export function permissionOutcome(request: RequestPermissionRequest, card: Card): RequestPermissionResponse {
  if (card.status !== 'answered') return CANCELLED;
  const picked = card.answer?.[PERMISSION_QUESTION]?.selected[0];
  const labels = labelsOf(request.options);
  const option = request.options.find((_, i) => labels[i] !== undefined && labels[i] === picked);
  return option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : CANCELLED;
}

/** ASKRELAY_APPROVE_TOOLS=1: the option that allows this one call, without a card; none offered, cancelled. */
export function allowOnce(request: RequestPermissionRequest): RequestPermissionResponse {
  const option = request.options.find((o) => o.kind === 'allow_once') ?? request.options.find((o) => o.kind === 'allow_always');
  return option ? { outcome: { outcome: 'selected', optionId: option.optionId } } : CANCELLED;
}

export { CANCELLED as PERMISSION_CANCELLED };
