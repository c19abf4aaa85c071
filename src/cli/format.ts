import type { AnswerEntry, Card, DeliveryState, Question } from '../cards/model.js';
import { clip, visibleControls } from '../cards/text.js';

export { clip };

// How cards and answers look in a terminal.

/** One question's answer as a line: picked labels, then any typed text, joined with ", ". */
export function entryText(entry: AnswerEntry | undefined): string {
  if (!entry) return '';
  return [...entry.selected, ...(entry.text ? [entry.text] : [])].join(', ');
}

/** A card's answer: the bare value for one question, "id: value" lines for several. */
export function answerText(card: Card): string {
  const answer = card.answer ?? {};
  if (card.questions.length === 1) return entryText(answer[card.questions[0].id]);
  return card.questions.map((q) => `${q.id}: ${entryText(answer[q.id])}`).join('\n');
}

/** "42s", "9m 5s", "7h 59m", "2d 3h": the page (fmtLeft) and the terminal UI write time left the same way. */
export function durationText(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}

const DELIVERY: Record<DeliveryState, string> = {
  queued: 'queued',
  sent: 'sent (not received yet)',
  delivered: 'delivered',
  undelivered: 'not delivered (nobody was waiting for it)',
  failed: 'not sent',
};

/** Where a card's answer got to, in words: "delivered to the session", "sent (not received yet)". */
export function deliveryText(card: Card): string {
  const delivery = card.delivery;
  if (!delivery) return 'not answered';
  const to = delivery.state === 'delivered' && delivery.to ? ` to ${DELIVERED_TO[delivery.to]}` : '';
  return `${DELIVERY[delivery.state]}${to}`;
}

/** Who took an answer, in words (`delivery.to`). */
export const DELIVERED_TO = { session: 'the session', mcp: 'the MCP client', 'long-poll': 'the long poll', ask: 'askrelay ask' } as const;

/** Time left for a pending card; its status otherwise, with where its answer got to. */
export function leftText(card: Card, now = Date.now()): string {
  if (card.status !== 'pending') {
    const delivery = card.delivery ? ` · ${card.lateAnswer ? 'late, ' : ''}${card.delivery.state}` : '';
    return `${card.status}${delivery}`;
  }
  const ms = Date.parse(card.expiresAt) - now;
  return ms > 0 ? durationText(ms) : 'expiring';
}

export function optionsText(q: Question): string {
  if (q.options.length === 0) return '(free text)';
  const list = q.options.map((o, i) => `${i + 1}) ${o.label}`).join('  ');
  return q.multiSelect ? `${list}  [several]` : list;
}

/** The text on one line: each run of whitespace (newlines too) one space, none at the ends. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The text on one line, at most `max` characters. */
export function cut(text: string, max: number): string {
  return clip(oneLine(text), max);
}

/** A routed card's rule and who it goes to (docs/routing.md): "payments → ada, bob (only them)". */
export function routeCell(card: Card): string {
  if (!card.routedTo?.length) return '';
  return `${card.route} → ${card.routedTo.join(', ')}${card.restricted ? ' (only them)' : ''}`;
}

/**
 * The cards as a table: one row per question, the card's id and time left on its first row,
 * and where routes sent them (a TO column, when any card matched a route).
 */
export function cardsTable(cards: Card[], now = Date.now()): string {
  const routed = cards.some((card) => card.routedTo?.length);
  const rows: string[][] = [['ID', 'LEFT', ...(routed ? ['TO'] : []), 'HEADER', 'QUESTION', 'OPTIONS']];
  for (const card of cards) {
    card.questions.forEach((q, i) => {
      const header = q.header ?? (i === 0 && card.title ? card.title : '');
      rows.push([
        i === 0 ? card.id : '',
        i === 0 ? leftText(card, now) : '',
        ...(routed ? [i === 0 ? cut(routeCell(card), 40) : ''] : []),
        cut(header, 16),
        cut(q.text, 60),
        optionsText(q),
      ]);
    });
  }
  return table(rows);
}

/**
 * Rows (the first one the header) as text columns two spaces apart, each as wide as its
 * widest cell; the columns in `rightAlign` padded on the left. The last column is never
 * padded, and no line ends in spaces.
 */
export function table(cells: string[][], { rightAlign = [] }: { rightAlign?: number[] } = {}): string {
  // Cells hold what agents wrote: nothing in them may steer the terminal.
  const rows = cells.map((r) => r.map(visibleControls));
  const widths = rows[0].map((_, col) => Math.max(...rows.map((r) => r[col].length)));
  const pad = (cell: string, col: number, last: boolean) =>
    rightAlign.includes(col) ? cell.padStart(widths[col]) : last ? cell : cell.padEnd(widths[col]);
  return rows.map((r) => r.map((cell, col) => pad(cell, col, col === r.length - 1)).join('  ').trimEnd()).join('\n');
}
