import { FAULT_KINDS, type FaultKind } from './history.js';

// What one chaos run does and for how long: read from the environment for `npm run chaos`
// (CHAOS_MINUTES, CHAOS_SEED, …), or shortened for the one-minute smoke in `npm test`.

export interface ChaosOptions {
  seed: number;
  /** How long faults and load go on; then the agents stop asking and the run drains. */
  runMs: number;
  nodes: number;
  /** ASKRELAY_LEASE of the nodes: a card may stay pending at most this long past its deadline. */
  leaseMs: number;
  /** ASKRELAY_WAIT of the nodes: how long an MCP ask_user card waits. */
  mcpWaitMs: number;
  /** The waitSeconds agents give their cards, drawn from this range (some expire unanswered). */
  cardWaitMs: [number, number];
  /** How long a SIGSTOP freezes a node, a hot table stays locked, a data folder stays read-only. */
  stopMs: number;
  lockMs: number;
  readOnlyMs: number;
  /** The kinds of fault made, in turn (CHAOS_FAULTS narrows them, to chase one problem). */
  faults: readonly FaultKind[];
  /** Between one fault's end and the next one's start. */
  quietMs: [number, number];
  /** A killed node must answer /api/health again within this. */
  healthyWithinMs: number;
  agents: { polls: number; streams: number; mcp: number };
  people: {
    /** Of the cards they see, how many someone answers (the rest expire, or are skipped). */
    answer: number;
    skip: number;
    /** How often a second person answers the same card at the same moment. */
    second: number;
    thinkMs: [number, number];
  };
}

const MINUTE = 60_000;

const DEFAULTS: Omit<ChaosOptions, 'seed' | 'runMs'> = {
  nodes: 3,
  leaseMs: 15_000,
  mcpWaitMs: 40_000,
  cardWaitMs: [6_000, 40_000],
  stopMs: 20_000,
  lockMs: 10_000,
  readOnlyMs: 15_000,
  faults: FAULT_KINDS,
  quietMs: [5_000, 15_000],
  healthyWithinMs: 10_000,
  agents: { polls: 5, streams: 2, mcp: 3 },
  people: { answer: 0.75, skip: 0.05, second: 0.25, thinkMs: [300, 30_000] },
};

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not "${raw}"`);
  return value;
}

function faultKinds(raw: string | undefined): readonly FaultKind[] {
  if (!raw?.trim()) return FAULT_KINDS;
  const kinds = raw.split(',').map((k) => k.trim());
  const unknown = kinds.find((k) => !(FAULT_KINDS as readonly string[]).includes(k));
  if (unknown) throw new Error(`CHAOS_FAULTS: "${unknown}" is not a fault; the faults are ${FAULT_KINDS.join(', ')}`);
  return kinds as FaultKind[];
}

/**
 * `npm run chaos`: CHAOS_MINUTES (default 10), CHAOS_SEED (default random), CHAOS_FAULTS
 * (some of sigkill,sigstop,terminate,read-only,slow-db; default all), CHAOS_STOP_SECONDS,
 * CHAOS_LOCK_SECONDS.
 */
export function chaosOptions(env: NodeJS.ProcessEnv = process.env): ChaosOptions {
  const seed = env.CHAOS_SEED?.trim() ? Math.floor(positive(env, 'CHAOS_SEED', 1)) : Math.floor(Math.random() * 2 ** 31);
  return {
    ...DEFAULTS,
    seed,
    runMs: positive(env, 'CHAOS_MINUTES', 10) * MINUTE,
    stopMs: positive(env, 'CHAOS_STOP_SECONDS', DEFAULTS.stopMs / 1000) * 1000,
    lockMs: positive(env, 'CHAOS_LOCK_SECONDS', DEFAULTS.lockMs / 1000) * 1000,
    faults: faultKinds(env.CHAOS_FAULTS),
  };
}

/**
 * About a minute, every fault kind once, with short freezes, locks and waits (cards expire
 * during the run too), on a smaller load: the smoke that `npm test` runs.
 */
export function smokeOptions(seed = Math.floor(Math.random() * 2 ** 31)): ChaosOptions {
  return {
    ...DEFAULTS,
    seed,
    runMs: 45_000,
    leaseMs: 5_000,
    mcpWaitMs: 12_000,
    cardWaitMs: [3_000, 12_000],
    // Longer than Node's default keep-alive (5 s), which a freeze used to outlast (docs/reliability.md).
    stopMs: 6_000,
    lockMs: 3_000,
    readOnlyMs: 3_000,
    quietMs: [1_500, 3_000],
    agents: { polls: 3, streams: 1, mcp: 2 },
    people: { ...DEFAULTS.people, thinkMs: [200, 8_000] },
  };
}
