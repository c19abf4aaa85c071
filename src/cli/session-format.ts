import type { Card } from '../cards/model.js';
import { visibleControls } from '../cards/text.js';
import type { Session, TranscriptEntry } from '../sessions/model.js';
import type { ProviderInfo } from '../sessions/providers.js';
import { durationText, optionsText, table } from './format.js';

// How sessions and their transcripts look in a terminal: "askrelay session" prints these,
// and following a session prints them as they come.

const LABEL_WIDTH = 9;
const TIME_WIDTH = 8;

/** "claude, messages, claude-sonnet-5". */
export function describe(session: Session): string {
  return [session.provider, session.engine, session.model].filter(Boolean).join(', ');
}

function clock(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return ''.padEnd(TIME_WIDTH);
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

/** One block: time, label, then the text (agents' words, controls made visible) with continuation lines lined up under it. */
function line(time: string, label: string, raw: string): string {
  const text = visibleControls(raw.replace(/\r\n?/g, '\n'));
  const indent = ' '.repeat(TIME_WIDTH + LABEL_WIDTH + 4);
  const [firstLine, ...more] = text.replace(/\s+$/, '').split('\n');
  const head = `${time.padEnd(TIME_WIDTH)}  ${label.padEnd(LABEL_WIDTH)}  ${firstLine}`.trimEnd();
  return [head, ...more.map((l) => `${indent}${l}`.trimEnd())].join('\n');
}

/** A transcript entry: "15:42:35  assistant  text", a card's id after a tool result. */
export function entryText(entry: TranscriptEntry): string {
  return line(clock(entry.at), entry.role, entry.cardId ? `${entry.text}  [${entry.cardId}]` : entry.text);
}

/** A card the session waits on, with the way to answer it from here. */
export function cardText(card: Card): string {
  const questions = card.questions.map((q, i) => {
    const label = q.header ? `${q.header}: ` : card.questions.length > 1 ? `${i + 1}. ` : '';
    return `${label}${q.text}  ${optionsText(q)}`;
  });
  const how =
    card.questions.length === 1
      ? `answer on the page or: askrelay answer ${card.id} <value>`
      : `answer on the page or: askrelay answer ${card.id} --answer <question>=<value> …`;
  return line('', 'card', [`${card.id} — ${questions[0]}`, ...questions.slice(1), how].join('\n'));
}

export function statusText(session: Session): string {
  switch (session.status) {
    case 'idle':
      return line('', 'idle', `the turn ended; send the next message with: askrelay session send ${session.id} "<text>"`);
    case 'stopped':
      return line('', 'stopped', 'the session was stopped.');
    case 'failed':
      return line('', 'failed', session.error ?? 'the session failed.');
    case 'stuck':
      return line('', 'stuck', 'no activity for a while; still following.');
    default:
      return line('', session.status, '');
  }
}

export function sessionHeader(session: Session): string {
  const who = session.agentsMayAnswer ? 'other agents may answer its cards' : 'only you answer its cards';
  const lines = [
    `Session ${session.id} (${describe(session)})`,
    `Status:  ${session.status}${session.error ? ` — ${session.error}` : ''}`,
    `Mode:    ${session.relayMode}; ${who}`,
    `Started: ${session.createdAt}, updated ${session.updatedAt}`,
  ];
  return lines.join('\n');
}

function ago(iso: string, now: number): string {
  const ms = now - Date.parse(iso);
  return Number.isNaN(ms) ? '' : `${durationText(ms)} ago`;
}

/** The sessions as a table, one row each. */
export function sessionsTable(sessions: Session[], now = Date.now()): string {
  const rows: string[][] = [['ID', 'PROVIDER', 'ENGINE', 'MODEL', 'STATUS', 'MODE', 'UPDATED']];
  for (const s of sessions) rows.push([s.id, s.provider, s.engine, s.model ?? '', s.status, s.relayMode, ago(s.updatedAt, now)]);
  return table(rows);
}

/**
 * The relay's providers for "askrelay session start --help" (GET /api/providers): each with
 * its name and the variables the relay reads for it, then its engines, the default marked.
 */
export function providersHelp(providers: readonly ProviderInfo[]): string {
  const width = Math.max(0, ...providers.flatMap((p) => p.engines.map((e) => e.id.length)));
  const lines = providers.flatMap((p) => [
    `  ${p.id} (${p.name}${p.variables.length ? `; the relay reads ${p.variables.join(', ')}` : ''})`,
    ...p.engines.map((e) => `    --engine ${e.id.padEnd(width)}  ${e.name}${e.default ? ' (default)' : ''}`),
  ]);
  return lines.join('\n');
}
