import type { Card } from '../../cards/model.js';
import { entries, openCard, type TuiState } from './state.js';

// Draws the state as plain lines (no escapes): the shell clears the screen and writes
// them. `now` is passed in so the remaining time can be tested and ticks every second.

export function remaining(card: Card, now: number): string {
  const ms = Date.parse(card.expiresAt) - now;
  if (!(ms > 0)) return 'expiring';
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${pad(m)}:${pad(sec)} left` : `${m}:${pad(sec)} left`;
}

const cut = (text: string, width: number) => (text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text);
const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();

function connectionText(s: TuiState): string {
  return s.connection === 'live' ? 'live' : s.connection === 'lost' ? 'reconnecting…' : 'connecting…';
}

export function render(s: TuiState, now: number, width = 80): string[] {
  const card = openCard(s);
  const lines = s.open && card ? cardLines(s, card, now, width) : listLines(s, now, width);
  if (s.notice) lines.push('', cut(s.notice, width));
  return lines;
}

function listLines(s: TuiState, now: number, width: number): string[] {
  const lines = [cut(`askrelay tui — ${s.cards.length} pending card${s.cards.length === 1 ? '' : 's'} · ${connectionText(s)}`, width), ''];
  if (s.cards.length === 0) lines.push('  No pending cards. New ones appear here as agents ask.');
  s.cards.forEach((c, i) => {
    const q = c.questions[0];
    const label = oneLine(c.title || (q?.header ? `[${q.header}] ${q.text}` : (q?.text ?? '')));
    const more = c.questions.length > 1 ? ` (+${c.questions.length - 1} more)` : '';
    const left = remaining(c, now);
    const mark = i === s.listIndex ? '>' : ' ';
    lines.push(`${mark} ${i + 1}. ${cut(label + more, Math.max(10, width - left.length - 9))}  ${left}`);
  });
  lines.push('', '↑↓ move · Enter or 1-9 open · q quit');
  return lines;
}

function cardLines(s: TuiState, card: Card, now: number, width: number): string[] {
  const open = s.open!;
  const q = card.questions[open.step];
  const steps = card.questions.length > 1 ? ` · question ${open.step + 1}/${card.questions.length}` : '';
  const lines = [cut(`askrelay tui — card ${card.id}${steps} · ${remaining(card, now)} · ${connectionText(s)}`, width), ''];
  if (card.title) lines.push(cut(oneLine(card.title), width));
  if (q.header) lines.push(cut(`[${q.header}]`, width));
  for (const line of q.text.split('\n')) lines.push(cut(line, width));
  lines.push('');
  entries(q).forEach((e, i) => {
    const mark = i === open.cursor && open.typing === undefined ? '>' : ' ';
    const num = `${i + 1}.`;
    if (e.kind === 'option') {
      const box = q.multiSelect ? (open.checked.includes(e.label) ? '[x] ' : '[ ] ') : '';
      lines.push(cut(`${mark} ${num} ${box}${e.label}${e.description ? ` — ${oneLine(e.description)}` : ''}`, width));
    } else {
      lines.push(`${mark} ${num} ${e.kind === 'other' ? 'Other…' : 'Skip'}`);
    }
  });
  lines.push('');
  if (open.sending) {
    lines.push(open.sending === 'skip' ? 'Skipping…' : 'Sending…');
  } else if (open.typing !== undefined) {
    lines.push(cut(`Your answer: ${open.typing}_`, width), 'Enter send · Esc back');
  } else if (q.multiSelect) {
    lines.push('↑↓ move · Space or 1-9 check · Enter send · Esc back to list');
  } else {
    lines.push('↑↓ move · 1-9 or Enter pick · Esc back to list');
  }
  return lines;
}
