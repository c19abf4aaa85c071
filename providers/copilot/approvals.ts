import type { Card, CardDraft } from '../../src/cards/model.js';

// The runtime's permission requests (shell, write, …) as approval cards only a human may
// answer, and the decision the runtime expects back.

export interface PermissionRequest {
  kind: string;
  toolCallId?: string;
  fullCommandText?: string;
  fileName?: string;
  diff?: string;
  intention?: string;
  toolName?: string;
  [key: string]: unknown;
}

export type PermissionDecision = { kind: 'approve-once' } | { kind: 'reject'; feedback: string };

const SUMMARY_CHARS = 1500;
const clip = (text: string) => (text.length > SUMMARY_CHARS ? `${text.slice(0, SUMMARY_CHARS - 1)}…` : text);

export function permissionDraft(request: PermissionRequest): CardDraft {
  const what =
    request.kind === 'shell'
      ? `Run this command?\n\n${request.fullCommandText ?? ''}`
      : request.kind === 'write'
        ? `${request.intention ?? 'Write'} ${request.fileName ?? 'a file'}?\n\n${request.diff ?? ''}`
        : `Allow ${request.toolName ?? request.kind}?\n\n${JSON.stringify(request, null, 2)}`;
  return {
    kind: 'approval',
    tool: `permission:${request.kind}`,
    origin: 'native',
    layout: 'steps',
    questions: [
      {
        id: 'allow',
        header: request.kind.slice(0, 12),
        text: clip(what.trim()),
        options: [
          { label: 'Allow', description: 'Let it run this once' },
          { label: 'Deny', description: 'Refuse; say why in the text box' },
        ],
      },
    ],
  };
}

// A reject always carries feedback: without it the runtime ends the turn on the spot.
export function permissionDecision(card: Card): PermissionDecision {
  const entry = card.status === 'answered' ? card.answer?.allow : undefined;
  if (entry?.selected[0] === 'Allow') return { kind: 'approve-once' };
  if (!entry) return { kind: 'reject', feedback: card.status === 'expired' ? 'Nobody approved it in time.' : 'Nobody approved it.' };
  return { kind: 'reject', feedback: entry.text ? `The user denied this tool use: ${entry.text}` : 'The user denied this tool use.' };
}
