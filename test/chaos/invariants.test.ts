import { describe, expect, it } from 'vitest';
import type { Ask, FinalState, History } from '../../bench/chaos/history.js';
import { checkRun, type ViolationKind } from '../../bench/chaos/invariants.js';

// The chaos suite's checker on hand-made histories: a run that kept every promise passes,
// and each broken promise is named by its kind.

const T = Date.parse('2026-12-01T10:00:00.000Z');
const limits = { leaseMs: 15_000, healthyWithinMs: 10_000 };

function history(over: Partial<History> = {}): History {
  return { seed: 1, startedAt: T, endedAt: T + 600_000, faults: [], asks: [], answers: [], errors: [], overdue: [], slow: [], counts: {}, ...over };
}

type Card = FinalState['cards'][number];
const card = (id: string, tag: string, over: Partial<Card> = {}): Card => ({ id, status: 'answered', labels: ['Red'], expiresAt: T + 30_000, text: `${tag}: which colour?`, ...over });
const entries = (...cards: Card[]) => cards.flatMap((c) => [{ event: 'card.created', cardId: c.id }, ...(c.status === 'pending' ? [] : [{ event: `card.${c.status}`, cardId: c.id }])]);

function final(cards: Card[], over: Partial<FinalState> = {}): FinalState {
  return { at: T + 700_000, cards, audit: entries(...cards), verify: { ok: true, entries: cards.length * 2, problems: [] }, ...over };
}

const ask = (tag: string, over: Partial<Ask> = {}): Ask => ({ tag, via: 'poll', cardId: `c_${tag}`, at: T, got: { outcome: 'answered', labels: ['Red'], at: T + 5_000 }, ...over });
const kinds = (h: History, f: FinalState): ViolationKind[] => checkRun(h, f, limits).map((v) => v.kind);

describe('the chaos checker', () => {
  const a = card('c_a', 'a');
  const clean = () => history({
    asks: [ask('a')],
    answers: [
      { cardId: 'c_a', person: 'ada', action: 'answer', labels: ['Red'], status: 200, at: T + 4_000 },
      { cardId: 'c_a', person: 'grace', action: 'answer', labels: ['Blue'], status: 409, at: T + 4_000 },
    ],
  });

  it('passes a run that kept every promise', () => {
    expect(checkRun(clean(), final([a]), limits)).toEqual([]);
  });

  it('finds a card acknowledged with 201 that the database does not hold', () => {
    expect(kinds(clean(), final([]))).toContain('lost-card');
  });

  it('finds a 200 for an answer that is not the final one, as when two people both got 200 with different colours', () => {
    const h = clean();
    h.answers[1].status = 200;
    expect(kinds(h, final([a]))).toEqual(['answer-not-final']);
  });

  it('finds a skip acknowledged with 200 on a card that ended answered', () => {
    const h = history({ answers: [{ cardId: 'c_a', person: 'ada', action: 'skip', labels: [], status: 200, at: T }] });
    expect(kinds(h, final([a]))).toEqual(['answer-not-final']);
  });

  it('finds a waiter that got nothing, or was told its card was cancelled', () => {
    expect(kinds(history({ asks: [ask('a', { got: undefined })] }), final([a]))).toEqual(['waiter-unserved']);
    const cancelled = card('c_a', 'a', { status: 'cancelled', labels: undefined });
    expect(kinds(history({ asks: [ask('a', { got: { outcome: 'cancelled', at: T } })] }), final([cancelled]))).toEqual(['waiter-unserved']);
  });

  it('finds a waiter handed another answer, or an expiry for a card that was answered', () => {
    expect(kinds(history({ asks: [ask('a', { got: { outcome: 'answered', labels: ['Green'], at: T } })] }), final([a]))).toEqual(['waiter-misled']);
    expect(kinds(history({ asks: [ask('a', { got: { outcome: 'expired', at: T } })] }), final([a]))).toEqual(['waiter-misled']);
  });

  it('finds one ask_user call with two cards, and tells tags apart that only start alike (mcp-1-1, mcp-1-10)', () => {
    const call = ask('mcp-1-1', { via: 'mcp', cardId: 'c_1' });
    const ten = card('c_10', 'mcp-1-10');
    expect(kinds(history({ asks: [call] }), final([card('c_1', 'mcp-1-1'), ten]))).toEqual([]);
    expect(kinds(history({ asks: [call] }), final([card('c_1', 'mcp-1-1'), card('c_2', 'mcp-1-1', { status: 'expired' }), ten]))).toEqual(['duplicate-card']);
  });

  it('finds a card pending past its deadline plus the lease, while the run watched or at its end', () => {
    const seen = history({ overdue: [{ cardId: 'c_x', expiresAt: T, seenAt: T + 15_001 }, { cardId: 'c_y', expiresAt: T, seenAt: T + 14_000 }] });
    expect(checkRun(seen, final([]), limits)).toEqual([{ kind: 'pending-overdue', detail: expect.stringContaining('card c_x') }]);
    const pending = card('c_p', 'p', { status: 'pending', labels: undefined, expiresAt: T });
    expect(kinds(history(), final([pending], { at: T + 16_000 }))).toEqual(['pending-overdue']);
    expect(kinds(history(), final([pending], { at: T + 14_000 }))).toEqual([]);
  });

  it('finds a killed node that was not healthy again in time, or never', () => {
    const fault = { kind: 'sigkill' as const, node: 1, at: T, endedAt: T + 1_000, detail: 'node-1' };
    expect(kinds(history({ faults: [{ ...fault, healthyAfterMs: 9_000 }] }), final([]))).toEqual([]);
    expect(kinds(history({ faults: [{ ...fault, healthyAfterMs: 10_500 }, fault] }), final([]))).toEqual(['slow-recovery', 'slow-recovery']);
  });

  it('finds an audit log that does not verify, a card without its entries, and a card closed twice', () => {
    expect(kinds(history(), final([a], { verify: { ok: false, entries: 2, problems: ['entry 2 was edited'] } }))).toEqual(['audit-broken']);
    expect(kinds(history(), final([a], { verify: { error: 'exit 1: unreachable' } }))).toEqual(['audit-broken']);
    expect(kinds(history(), final([a], { audit: [{ event: 'card.answered', cardId: 'c_a' }] }))).toEqual(['audit-missing']);
    expect(kinds(history(), final([a], { audit: [{ event: 'card.created', cardId: 'c_a' }] }))).toEqual(['audit-missing']);
    expect(kinds(history(), final([a], { audit: [...entries(a), { event: 'card.expired', cardId: 'c_a' }] }))).toEqual(['closed-twice']);
  });
});

describe('the chaos checker on what clients saw', () => {
  const kill = { kind: 'sigkill' as const, node: 0, at: T, endedAt: T + 1_000, detail: 'node-0', healthyAfterMs: 1_000 };
  const freeze = { kind: 'sigstop' as const, node: 1, at: T + 30_000, endedAt: T + 50_000, detail: 'node-1', healthyAfterMs: 200 };
  const hangUp = (at: number) => ({ at, client: 'poll-1', what: 'GET /api/cards: socket hang up', cause: 'no-reply' as const, route: 'GET /api/cards' });

  it('lets a node killed mid-request lose that request, and lets streams and MCP calls be cut off', () => {
    const h = history({ faults: [kill, freeze], errors: [
      hangUp(T + 100),
      { at: T + 200, client: 'people', what: 'POST /api/cards/:id/answer: HTTP 502', cause: 'http', route: 'POST /api/cards/:id/answer', status: 502 },
      { at: T + 31_000, client: 'stream-1', what: 'the stream ended', cause: 'stream' },
      { at: T + 31_000, client: 'mcp-1', what: 'Session not found', cause: 'mcp' },
      { at: T + 32_000, client: 'people', what: 'POST /api/cards: HTTP 503 store_unavailable', cause: 'http', route: 'POST /api/cards', status: 503, code: 'store_unavailable' },
    ] });
    expect(kinds(h, final([]))).toEqual([]);
  });

  it('finds a request a frozen node never answered (its keep-alive ran out during the freeze)', () => {
    expect(kinds(history({ faults: [kill, freeze], errors: [hangUp(T + 50_100)] }), final([]))).toEqual(['request-lost']);
    expect(kinds(history({ faults: [kill], errors: [hangUp(T - 1)] }), final([]))).toEqual(['request-lost']);
  });

  it("finds the balancer's own 503 and a long poll ended with 503", () => {
    const h = history({ faults: [kill], errors: [
      { at: T + 500, client: 'poll-2', what: "GET /api/cards: HTTP 503 (the balancer's)", cause: 'http', route: 'GET /api/cards', status: 503 },
      { at: T + 600, client: 'poll-2', what: 'GET /api/cards/:id/wait: HTTP 503 store_unavailable', cause: 'http', route: 'GET /api/cards/:id/wait', status: 503, code: 'store_unavailable' },
    ] });
    expect(kinds(h, final([]))).toEqual(['no-node', 'poll-refused']);
  });
});
