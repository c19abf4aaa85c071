import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { logLevel, type LogLevel } from './ops/log.js';
import { clockAhead, type Clock } from './relay/clock.js';
import { MIN_SECRET_CHARS } from './store/data-folder.js';

// Configuration from flags and environment, with defaults that serve a newcomer.

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "8h", "90m", "2s", "500ms", "1h30m" or a bare number of seconds → milliseconds. */
export function parseDuration(text: string): number {
  const trimmed = text.trim();
  const parts = /^\d+(\.\d+)?$/.test(trimmed) ? [[trimmed, trimmed, 's']] : [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
  if (!parts.length || parts.map((p) => p[0]).join('') !== trimmed) {
    throw new Error(`"${text}" is not a duration; write it like 8h, 90m, 2s, 500ms or 1h30m.`);
  }
  const ms = parts.reduce((sum, [, n, unit]) => sum + Number(n) * UNITS[unit], 0);
  if (ms <= 0) throw new Error(`"${text}" is not a positive duration.`);
  return Math.round(ms);
}

/** Long-lived connections one caller may hold, unless ASKRELAY_MAX_CONNECTIONS says otherwise. */
export const DEFAULT_MAX_CONNECTIONS = 1000;

export interface ServeConfig {
  port: number;
  host: string;
  dataDir: string;
  token?: string;
  /** ASKRELAY_AUDIT_KEY; else <data>/audit.key, made on first start. */
  auditKey?: string;
  /**
   * A postgres:// URL (ASKRELAY_DATABASE_URL, --database): the relay keeps its stores there
   * instead of the SQLite file, and any number of nodes may share it as one relay.
   */
  databaseUrl?: string;
  /** This node's name among the nodes on one database (ASKRELAY_NODE_ID; default host:port). */
  nodeId?: string;
  /** How long a node's lease on a piece of work lasts unless renewed (ASKRELAY_LEASE, default 15s). */
  leaseMs: number;
  /** ASKRELAY_WAIT: how long cards wait unless their engine has a wait of its own (the registry's declarations). */
  waitMs: number;
  /** A running turn with no activity for this long is shown as stuck (ASKRELAY_STUCK_AFTER). */
  stuckAfterMs: number;
  /** Long-lived connections (event streams, waits, MCP streams) one caller may hold at once (ASKRELAY_MAX_CONNECTIONS). */
  maxConnections: number;
  /** ASKRELAY_LOG: what the log (JSON lines on stdout) says; default info. */
  logLevel: LogLevel;
  /** ASKRELAY_METRICS_TOKEN: a token that opens GET /metrics only (for a scraper), beside the relay token. */
  metricsToken?: string;
  /** The environment providers read their endpoints and keys from. */
  env: NodeJS.ProcessEnv;
  /**
   * Where deadlines, MCP progress and grace, and session timestamps take the time from: the
   * system's by default; tests pass a hand-moved one, or ASKRELAY_TEST_CLOCK_OFFSET sets it ahead.
   */
  clock?: Clock;
}

export interface ServeFlags {
  port?: string;
  host?: string;
  data?: string;
  database?: string;
  /** Approve every tool permission a provider asks for, without a card (ASKRELAY_APPROVE_TOOLS=1 for providers). */
  approveTools?: boolean;
}

export function serveConfig(flags: ServeFlags, env: NodeJS.ProcessEnv = process.env): ServeConfig {
  const portText = flags.port ?? env.ASKRELAY_PORT ?? '7070';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`"${portText}" is not a port; give a whole number from 0 to 65535.`);
  }
  return {
    port,
    host: flags.host ?? env.ASKRELAY_HOST ?? '127.0.0.1',
    dataDir: resolve(flags.data ?? env.ASKRELAY_DATA ?? '.askrelay'),
    token: env.ASKRELAY_TOKEN?.trim() || undefined,
    auditKey: env.ASKRELAY_AUDIT_KEY?.trim() || undefined,
    ...databaseSetting(flags.database ?? env.ASKRELAY_DATABASE_URL),
    ...(env.ASKRELAY_NODE_ID?.trim() ? { nodeId: nodeIdSetting(env.ASKRELAY_NODE_ID.trim()) } : {}),
    leaseMs: namedDuration('ASKRELAY_LEASE', env.ASKRELAY_LEASE ?? '15s'),
    waitMs: namedDuration('ASKRELAY_WAIT', env.ASKRELAY_WAIT ?? '8h'),
    stuckAfterMs: namedDuration('ASKRELAY_STUCK_AFTER', env.ASKRELAY_STUCK_AFTER ?? '10m'),
    maxConnections: wholeNumber('ASKRELAY_MAX_CONNECTIONS', env.ASKRELAY_MAX_CONNECTIONS ?? String(DEFAULT_MAX_CONNECTIONS)),
    logLevel: logLevel(env.ASKRELAY_LOG),
    ...metricsTokenSetting(env.ASKRELAY_METRICS_TOKEN),
    env: flags.approveTools ? { ...env, ASKRELAY_APPROVE_TOOLS: '1' } : env,
    ...(env.ASKRELAY_TEST_CLOCK_OFFSET ? { clock: clockAhead(namedDuration('ASKRELAY_TEST_CLOCK_OFFSET', env.ASKRELAY_TEST_CLOCK_OFFSET)) } : {}),
  };
}

/** The node's default name: the host and the port it listens on (port 0: the one it got). */
export function defaultNodeId(port: number | string): string {
  return `${hostname()}:${port}`;
}

function nodeIdSetting(id: string): string {
  if (!/^[\w.:@-]{1,100}$/.test(id)) throw new Error(`ASKRELAY_NODE_ID: "${id}" is not a node name; use up to 100 letters, digits and . : @ _ -.`);
  return id;
}

function metricsTokenSetting(raw: string | undefined): { metricsToken?: string } {
  const token = raw?.trim();
  if (!token) return {};
  if (token.length < MIN_SECRET_CHARS) throw new Error(`ASKRELAY_METRICS_TOKEN is shorter than ${MIN_SECRET_CHARS} characters; make one with "openssl rand -base64 24".`);
  return { metricsToken: token };
}

function databaseSetting(url: string | undefined): { databaseUrl?: string } {
  const text = url?.trim();
  if (!text) return {};
  if (!/^postgres(ql)?:\/\//i.test(text)) {
    throw new Error(`ASKRELAY_DATABASE_URL / --database: "${text.replace(/\/\/[^@/]*@/, '//…@')}" is not a postgres:// URL; unset it to keep the embedded SQLite store.`);
  }
  return { databaseUrl: text };
}

/** parseDuration, with the setting's name in front of any error ("ASKRELAY_WAIT: …"). */
export function namedDuration(name: string, value: string): number {
  try {
    return parseDuration(value);
  } catch (err) {
    throw new Error(`${name}: ${(err as Error).message}`);
  }
}

/** A whole number of at least 1, with the setting's name in front of any error. */
export function wholeNumber(name: string, value: string): number {
  const n = Number(value.trim());
  if (!value.trim() || !Number.isInteger(n) || n < 1) throw new Error(`${name}: "${value}" is not a whole number of at least 1.`);
  return n;
}
