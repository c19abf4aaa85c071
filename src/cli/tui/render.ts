import type { Card } from '../../cards/model.js';
import { visibleControls } from '../../cards/text.js';
import { clip, cut, durationText, oneLine, routeCell } from '../format.js';
import { SKIP_COMMAND, cardLabel, entries, openCard, replyTarget, type TuiState } from './state.js';

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

/** The screen as lines at most `width` wide and (for an open card) `height` tall. */
export function render(s: TuiState, now: number, width = 80, height = Infinity): string[] {
  // Cards hold what agents wrote: a control character in them must not steer the terminal.
  return screenLines(s, now, width, height).map(visibleControls);
}

function screenLines(s: TuiState, now: number, width: number, height: number): string[] {
  const card = openCard(s);
  if (s.open && card) {
    return cardLines(s, card, now, width, height);
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
    const n = s.cards.length;
    lines.push(clip(`${n} card${n === 1 ? '' : 's'} waiting · /question reopens the one you left: ${cardLabel(collapsed)}`, width));
  }
  lines.push(tail(`› ${s.input}_`, width));
  const typed = s.input.trim();
  const target = replyTarget(s);
  if (!typed) {
    lines.push(clip('↑↓ move · Enter or 1-9 open · type a reply or /question, then Enter · q quit', width));
  } else if (typed.startsWith('/')) {
    lines.push(clip('Enter runs the command (/question, /question N, /late ID TEXT, /quit) · Esc clears', width));
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

/** A line in pieces of at most `width` characters, broken at spaces where it can be. */
export function wrap(line: string, width: number): string[] {
  const w = Math.max(1, width);
  const out: string[] = [];
  let rest = line;
  while (rest.length > w) {
    const space = rest.lastIndexOf(' ', w);
    const cut = space > w / 3 ? space : w;
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut).replace(/^ /, '');
  }
  out.push(rest);
  return out;
}

/**
 * An open card: its status line on top and the keys at the bottom stay put; between them
 * the card (title, question, options) scrolls when it is taller than the terminal. Lines
 * too wide are cut, or wrapped in full once `e` is pressed.
 */
function cardLines(s: TuiState, card: Card, now: number, width: number, height: number): string[] {
  const open = s.open!;
  const q = card.questions[open.step];
  const fit = (line: string) => (open.expanded ? wrap(line, width) : [clip(line, width)]);
  const steps = card.questions.length > 1 ? ` · question ${open.step + 1}/${card.questions.length}` : '';
  const head = [clip(`askrelay tui — card ${card.id}${steps} · ${remaining(card, now)} · ${connectionText(s)}`, width), ''];

  const body: string[] = [];
  if (card.title) body.push(...fit(oneLine(card.title)));
  // Who else it went to (docs/routing.md), so a person knows whether it is theirs to answer.
  if (card.routedTo?.length) body.push(...fit(`For ${routeCell(card)}`));
  if (q.header) body.push(...fit(`[${q.header}]`));
  body.push(...questionLines(q.text).flatMap(fit));
  body.push('');
  let cursorLine = -1;
  // A question that takes only words shows no list: the answer line is the prompt.
  if (q.options.length > 0) {
    entries(q).forEach((e, i) => {
      const mark = i === open.cursor && open.typing === undefined ? '>' : ' ';
      if (mark === '>') cursorLine = body.length;
      const num = `${i + 1}.`;
      if (e.kind === 'option') {
        const box = q.multiSelect ? (open.checked.includes(e.label) ? '[x] ' : '[ ] ') : '';
        body.push(...fit(`${mark} ${num} ${box}${e.label}${e.description ? ` — ${oneLine(e.description)}` : ''}`));
      } else {
        body.push(`${mark} ${num} ${e.kind === 'other' ? 'Other…' : 'Skip'}`);
      }
    });
  }

  const foot = [''];
  if (open.sending) {
    foot.push(open.sending === 'skip' ? 'Skipping…' : 'Sending…');
  } else if (open.typing !== undefined) {
    const back = q.options.length ? 'Esc back' : `Esc back to the list · ${SKIP_COMMAND} skips`;
    foot.push(tail(`Your answer: ${open.typing}_`, width), clip(`Enter send · ${back}${open.step > 0 ? ' · ← previous question' : ''}`, width));
  } else {
    const keys = q.multiSelect ? '↑↓ move · Space or 1-9 check · Enter send' : '↑↓ move · 1-9 or Enter pick';
    foot.push(clip(`${keys}${open.step > 0 ? ' · ← back' : ''} · e ${open.expanded ? 'cut long lines' : 'show long lines'} · Esc back to list`, width));
  }
  if (s.notice) foot.push('', clip(s.notice, width));
  return [...head, ...scrolled(body, height - head.length - foot.length, open.scroll, cursorLine), ...foot];
}

/** A question's text by line: a fenced code block's fences dropped and its lines indented. */
export function questionLines(text: string): string[] {
  const out: string[] = [];
  let inCode = false;
  for (const line of text.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      inCode = !inCode;
      continue;
    }
    out.push(inCode ? `    ${line}` : line);
  }
  return out;
}

/**
 * The part of `body` that fits in `room` lines, with a line saying what is above and below.
 * `scroll` set: from that line (PgUp/PgDn); unset: from the top, or as far down as shows
 * the cursor.
 */
function scrolled(body: string[], room: number, scroll: number | undefined, cursorLine: number): string[] {
  if (!Number.isFinite(room) || body.length <= room) return body;
  const more = (n: number, dir: string, key: string) => `  ${dir} ${n} more line${n === 1 ? '' : 's'} (${key})`;
  const rows = Math.max(1, room - 2); // a line each for "more above" and "more below"
  const start = Math.min(body.length - rows, Math.max(0, scroll ?? (cursorLine >= rows ? cursorLine - rows + 1 : 0)));
  if (start === 0) return [...body.slice(0, rows + 1), more(body.length - rows - 1, '↓', 'PgDn')];
  const end = start + rows;
  return [more(start, '↑', 'PgUp'), ...body.slice(start, end), ...(end < body.length ? [more(body.length - end, '↓', 'PgDn')] : [])];
}
