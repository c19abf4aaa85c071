import { describe, expect, it } from 'vitest';
import { summarizeFaults } from '../../bench/chaos/error-windows.js';
import { faultOrder } from '../../bench/chaos/faults.js';
import { FAULT_KINDS, type History } from '../../bench/chaos/history.js';
import { chaosOptions, smokeOptions } from '../../bench/chaos/options.js';
import { plan } from '../../bench/chaos/people.js';
import { Random } from '../../bench/chaos/random.js';
import { columns, renderReport } from '../../bench/chaos/table.js';

// The chaos suite's pure parts besides the checker: what clients felt after each fault, the
// table, the options read from the environment, and the seeded choices.

const T = Date.parse('2026-12-01T10:00:00.000Z');

function history(over: Partial<History> = {}): History {
  return { seed: 7, startedAt: T, endedAt: T + 120_000, faults: [], asks: [], answers: [], errors: [], overdue: [], slow: [], counts: {}, ...over };
}

const kill = { kind: 'sigkill' as const, node: 0, at: T + 10_000, endedAt: T + 11_000, detail: 'node-0', healthyAfterMs: 1_000 };
const freeze = { kind: 'sigstop' as const, node: 1, at: T + 40_000, endedAt: T + 60_000, detail: 'node-1', healthyAfterMs: 300 };

describe('what clients felt after each fault', () => {
  it('counts each error against the fault whose time it falls in, its window running from that fault\'s start', () => {
    const h = history({
      faults: [kill, freeze],
      errors: [
        { at: T + 5_000, client: 'poll-1', what: 'before anything broke', cause: 'no-reply' as const },
        { at: T + 10_100, client: 'poll-1', what: 'refused', cause: 'no-reply' as const },
        { at: T + 10_400, client: 'mcp-1', what: 'cut off', cause: 'no-reply' as const },
        { at: T + 60_100, client: 'people', what: 'socket hang up', cause: 'no-reply' as const },
      ],
      slow: [{ at: T + 41_000, ms: 19_500 }, { at: T + 1_000, ms: 1_200 }],
    });
    const { kinds, calm } = summarizeFaults(h);
    const by = Object.fromEntries(kinds.map((k) => [k.kind, k]));
    expect(by.sigkill).toMatchObject({ made: 1, errors: 2, longestWindowMs: 400, slowestRecoveryMs: 1_000 });
    expect(by.sigstop).toMatchObject({ made: 1, errors: 1, longestWindowMs: 20_100, slowestReplyMs: 19_500, slowestRecoveryMs: 300 });
    expect(by.terminate).toMatchObject({ made: 0, errors: 0, longestWindowMs: 0 });
    expect(calm).toEqual({ errors: 1, slowestReplyMs: 1_200 });
  });

  it('leaves a fault that could not be made out of the time, and says why', () => {
    const notMade = { kind: 'read-only' as const, node: 2, at: T + 20_000, endedAt: T + 20_000, detail: 'node-2', failed: 'mount --bind refused' };
    const { kinds } = summarizeFaults(history({ faults: [kill, notMade], errors: [{ at: T + 25_000, client: 'poll-1', what: 'x', cause: 'no-reply' as const }] }));
    expect(kinds.find((k) => k.kind === 'read-only')).toMatchObject({ made: 0, failed: ['mount --bind refused'], errors: 0 });
    expect(kinds.find((k) => k.kind === 'sigkill')).toMatchObject({ errors: 1, longestWindowMs: 15_000 });
  });
});

describe('the table', () => {
  it('lines up its columns', () => {
    expect(columns([['a', '1'], ['longer', '22']])).toBe('a         1\nlonger   22');
  });

  it('shows the operations, every kind of fault, the errors clients saw and each violation', () => {
    const options = { ...smokeOptions(7), stopMs: 20_000, lockMs: 10_000 };
    const text = renderReport({
      options,
      history: history({ faults: [kill], counts: { 'cards.asked': 12, 'answers.200': 9 }, errors: [{ at: T + 10_100, client: 'poll-1', what: 'GET /api/cards/:id/wait: socket hang up', cause: 'no-reply' as const }] }),
      violations: [{ kind: 'lost-card', detail: 'poll-1-3: card c_1 is not in the database' }],
      problems: [],
    });
    expect(text).toContain('seed 7');
    expect(text).toMatch(/cards asked \(POST, 201\)\s+12/);
    expect(text).toMatch(/SIGKILL a node, restart at once\s+1\s+1\s+0\.1 s\s+0\.0 s\s+1\.0 s/);
    expect(text).toContain('SIGSTOP a node for 20 s');
    expect(text).toContain('a hot table locked 10 s');
    expect(text).toMatch(/GET \/api\/cards\/:id\/wait: socket hang up\s+1/);
    expect(text).toMatch(/^violations\s+1$/m);
    expect(text).toContain('lost-card: poll-1-3: card c_1 is not in the database');
  });
});

describe('the options', () => {
  it('reads CHAOS_MINUTES, CHAOS_SEED, CHAOS_FAULTS and the fault lengths, with the issue\'s defaults', () => {
    const defaults = chaosOptions({});
    expect(defaults).toMatchObject({ runMs: 600_000, nodes: 3, stopMs: 20_000, lockMs: 10_000, faults: FAULT_KINDS });
    expect(chaosOptions({ CHAOS_MINUTES: '30', CHAOS_SEED: '42', CHAOS_FAULTS: 'sigkill, slow-db', CHAOS_STOP_SECONDS: '5' })).toMatchObject({
      runMs: 1_800_000, seed: 42, faults: ['sigkill', 'slow-db'], stopMs: 5_000,
    });
    expect(() => chaosOptions({ CHAOS_MINUTES: 'ten' })).toThrow('CHAOS_MINUTES must be a positive number');
    expect(() => chaosOptions({ CHAOS_FAULTS: 'sigkill,flood' })).toThrow('"flood" is not a fault');
  });
});

describe('the seeded choices', () => {
  it('repeat for one seed', () => {
    const a = new Random(42);
    const b = new Random(42);
    expect(Array.from({ length: 5 }, () => a.int(0, 100))).toEqual(Array.from({ length: 5 }, () => b.int(0, 100)));
  });

  it('make every kind of fault once in each round', () => {
    const next = faultOrder(new Random(3), FAULT_KINDS);
    for (let round = 0; round < 3; round++) expect(Array.from({ length: FAULT_KINDS.length }, next).sort()).toEqual([...FAULT_KINDS].sort());
  });

  it('have people answer, answer at once with two, skip, or leave a card, as the options say', () => {
    const random = new Random(5);
    const p = { answer: 1, skip: 0, second: 1, thinkMs: [0, 1] as [number, number] };
    const race = plan(random, p);
    expect(race.map((a) => a.action)).toEqual(['answer', 'answer']);
    expect(race[0].person).not.toBe(race[1].person);
    expect(plan(random, { ...p, answer: 0 })).toEqual([]);
    expect(plan(random, { ...p, skip: 1 })).toEqual([{ person: expect.any(String), action: 'skip', labels: [] }]);
  });
});
