import type { Plan, SessionUpdate } from '@agentclientprotocol/sdk';
import { clip } from '../cards/text.js';
import type { TranscriptEntry } from '../store/session-record.js';

// What an ACP agent's session/update notifications put in the session's transcript. Pure.
// The agent's text arrives in chunks, which the runner joins into one assistant entry; a tool
// call is one entry when it starts and one when it ends; a plan is one entry each time it
// changes. Thoughts, the commands list, modes and usage stay out.

const ENTRY_CHARS = 4000;

export type UpdateEffect =
  /** More of the agent's reply: joined with the chunks before it. */
  | { kind: 'text'; text: string }
  | { kind: 'entry'; role: TranscriptEntry['role']; text: string }
  | undefined;

/** The title each tool call was given when it started, for the entry that says it ended. */
export type ToolTitles = Map<string, string>;

export function readUpdate(update: SessionUpdate, titles: ToolTitles): UpdateEffect {
  switch (update.sessionUpdate) {
    case 'agent_message_chunk':
      return update.content.type === 'text' ? { kind: 'text', text: update.content.text } : undefined;
    case 'tool_call': {
      const title = update.title || update.kind || 'a tool';
      titles.set(update.toolCallId, title);
      return { kind: 'entry', role: 'tool', text: clip(`${title}${update.kind ? ` (${update.kind})` : ''}`, ENTRY_CHARS) };
    }
    case 'tool_call_update': {
      if (update.status !== 'completed' && update.status !== 'failed') return undefined;
      const title = update.title || titles.get(update.toolCallId) || update.toolCallId;
      titles.delete(update.toolCallId);
      return { kind: 'entry', role: 'tool', text: clip(`${title}: ${update.status}`, ENTRY_CHARS) };
    }
    case 'plan':
      return { kind: 'entry', role: 'system', text: clip(planText(update), ENTRY_CHARS) };
    default:
      return undefined;
  }
}

const MARK: Record<string, string> = { pending: '[ ]', in_progress: '[~]', completed: '[x]' };

export function planText(plan: Plan): string {
  return ['Plan:', ...plan.entries.map((e, i) => `${i + 1}. ${MARK[e.status] ?? '[ ]'} ${e.content}`)].join('\n');
}
