import type { Card } from '../../cards/model.js';
import { visibleControls } from '../../cards/text.js';
import { clip, cut, durationText, oneLine } from '../format.js';
import { cardLabel, entries, openCard, replyTarget, type TuiState } from './state.js';

// Draws the state as plain lines (no escapes): the shell clears the screen and writes
// them. `now` is passed in so the remaining time can be tested and ticks every second.

/** "7h 59m left": as the page and `askrelay cards` write it (durationText). */
export function remaining(card: Card, now: number): string {
  const ms = Date.parse(card.expiresAt) - now;
  return ms > 0 ? `${durationText(ms)} left` : 'expiring';
}

function connectionText(s: TuiState): string {
  return s.connection === 'live' ? 'live' : s.connection === 'lost' ? 'reconnecting…' : 'connecting…';
}

export function render(s: TuiState, now: number, width = 80): string[] {
  // Cards hold what agents wrote: a control character in them must not steer the terminal.
  return screenLines(s, now, width).map(visibleControls);
}

function screenLines(s: TuiState, now: number, width: number): string[] {
  const card = openCard(s);
  if (s.open && card) {
    const lines = cardLines(s, card, now, width);
    if (s.notice) lines.push('', clip(s.notice, width));
    return lines;
  }
  return listLines(s, now, width);
}

/** The end of a line that is too long (the input line shows what is being typed). */
const tail = (text: string, width: number) => (text.length > width ? `…${text.slice(text.length - Math.max(0, width - 1))}` : text);

function listLines(s: TuiState, now: number, width: number): string[] {
  const lines = [clip(`askrelay tui — ${s.cards.length} pending card${s.cards.length === 1 ? '' : 's'} · ${connectionText(s)}`, width), ''];
  if (s.cards.length === 0) lines.push('  No pending cards. New ones appear here as agents ask.');
  // Labels padded to one width so the times left line up.
  const rows = s.cards.map((c) => ({ label: cardLabel(c) + (c.questions.length > 1 ? ` (+${c.questions.length - 1} more)` : ''), left: remaining(c, now) }));
  const room = Math.max(10, width - Math.max(0, ...rows.map((r) => r.left.length)) - 9);
  const column = Math.min(room, Math.max(0, ...rows.map((r) => r.label.length)));
  rows.forEach((r, i) => {
    const mark = i === s.listIndex ? '>' : ' ';
    lines.push(`${mark} ${String(i + 1).padStart(String(rows.length).length)}. ${clip(r.label, column).padEnd(column)}  ${r.left}`);
  });
  lines.push('');
  const collapsed = s.collapsed && s.cards.find((c) => c.id === s.collapsed!.cardId);
  if (collapsed) {
    const n = collapsed.questions.length;
    lines.push(clip(`${n} question${n === 1 ? '' : 's'} waiting: ${cardLabel(collapsed)} — /question to reopen`, width));
  }
  lines.push(tail(`› ${s.input}_`, width));
  const typed = s.input.trim();
  const target = replyTarget(s);
  if (!typed) {
    lines.push(clip('↑↓ move · Enter or 1-9 open · type a reply or /question, then Enter · q quit', width));
  } else if (typed.startsWith('/')) {
    lines.push(clip('Enter runs the command (/question, /question N, /quit) · Esc clears', width));
  } else if (target) {
    lines.push(clip(`Enter answers ${s.cards.indexOf(target) + 1}. ${cardLabel(target)} (${target.id}) · Esc clears`, width));
  } else {
    lines.push('No question is waiting · Esc clears');
  }
  // How the last cards closed, then what just happened (unless it is that same last line).
  const recent = s.resolved.map((r) => r.line);
  const notice = s.notice && s.notice !== recent[recent.length - 1] ? [s.notice] : [];
  if (recent.length || notice.length) lines.push('', ...[...recent, ...notice].map((l) => cut(l, width)));
  return lines;
}

function cardLines(s: TuiState, card: Card, now: number, width: number): string[] {
  const open = s.open!;
  const q = card.questions[open.step];
  const steps = card.questions.length > 1 ? ` · question ${open.step + 1}/${card.questions.length}` : '';
  const lines = [clip(`askrelay tui — card ${card.id}${steps} · ${remaining(card, now)} · ${connectionText(s)}`, width), ''];
  if (card.title) lines.push(cut(card.title, width));
  if (q.header) lines.push(clip(`[${q.header}]`, width));
  for (const line of q.text.split('\n')) lines.push(clip(line, width));
  lines.push('');
  entries(q).forEach((e, i) => {
    const mark = i === open.cursor && open.typing === undefined ? '>' : ' ';
    const num = `${i + 1}.`;
    if (e.kind === 'option') {
      const box = q.multiSelect ? (open.checked.includes(e.label) ? '[x] ' : '[ ] ') : '';
      lines.push(clip(`${mark} ${num} ${box}${e.label}${e.description ? ` — ${oneLine(e.description)}` : ''}`, width));
    } else {
      lines.push(`${mark} ${num} ${e.kind === 'other' ? 'Other…' : 'Skip'}`);
    }
  });
  lines.push('');
  if (open.sending) {
    lines.push(open.sending === 'skip' ? 'Skipping…' : 'Sending…');
  } else if (open.typing !== undefined) {
    lines.push(clip(`Your answer: ${open.typing}_`, width), 'Enter send · Esc back');
  } else if (q.multiSelect) {
    lines.push('↑↓ move · Space or 1-9 check · Enter send · Esc back to list');
  } else {
    lines.push('↑↓ move · 1-9 or Enter pick · Esc back to list');
  }
  return lines;
}
