import { pino, type DestinationStream, type Logger } from 'pino';

// The relay's log: pino, one JSON line per event on stdout (or pretty lines when stdout is a
// terminal), at the level ASKRELAY_LOG names. Fields that could carry a secret or an answer
// are redacted by name, as a second lock behind the events (ops.ts) that never include them.

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const REDACT = ['token', 'authorization', 'cookie', 'answer', 'answers', 'text', 'apiKey', 'password', 'secret'];

/** ASKRELAY_LOG as a level; a wrong value stops the start with a sentence naming the variable. */
export function logLevel(raw: string | undefined): LogLevel {
  const value = raw?.trim().toLowerCase() || 'info';
  if ((LOG_LEVELS as readonly string[]).includes(value)) return value as LogLevel;
  throw new Error(`ASKRELAY_LOG must be one of ${LOG_LEVELS.join(', ')} (got "${raw}").`);
}

export interface LogOptions {
  level: LogLevel;
  /** Where the lines go; default stdout. */
  destination?: DestinationStream;
  /** Fields on every line (the node's name). */
  base?: Record<string, string>;
}

export async function createLogger({ level, destination, base = {} }: LogOptions): Promise<Logger> {
  const options = {
    level,
    base: { ...base },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
    redact: { paths: [...REDACT, ...REDACT.map((name) => `*.${name}`)], censor: '[redacted]' },
  };
  if (destination) return pino(options, destination);
  if (process.stdout.isTTY && level !== 'silent') {
    // Loaded only for a terminal: a server's log stays JSON.
    const { PinoPretty } = await import('pino-pretty');
    return pino(options, PinoPretty({ sync: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' }));
  }
  return pino(options, pino.destination({ dest: 1, sync: true }));
}
