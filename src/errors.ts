// One table of every error the relay reports. Surfaces map a code to their own form
// (HTTP status, tool error, CLI exit code); the code and message stay the same everywhere.
export const errorTable = {
  unauthorized: 401,
  human_only: 403,
  operator_only: 403,
  own_session: 403,
  agents_not_allowed: 403,
  cross_origin: 403,
  malformed_json: 400,
  invalid_request: 400,
  not_found: 404,
  already_answered: 409,
  session_busy: 409,
  already_exists: 409,
  too_many_subscriptions: 409,
  card_closed: 410,
  session_closed: 410,
  body_too_large: 413,
  unsupported_media_type: 415,
  invalid_card: 422,
  invalid_engine: 422,
  invalid_answer: 422,
  ambiguous_reply: 422,
  unknown_question: 422,
  missing_answer: 422,
  empty_answer: 422,
  unknown_option: 422,
  too_many_choices: 422,
  free_text_not_allowed: 422,
  credential_refused: 422,
  idempotency_key_reused: 422,
  invalid_subscription: 422,
  too_many_connections: 429,
  store_unavailable: 503,
  node_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorTable;

export class RelayError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    // Extra fields that travel with the error body, e.g. the card that won a race.
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'RelayError';
  }

  get status(): number {
    return errorTable[this.code];
  }

  toJSON() {
    return { error: { code: this.code, message: this.message }, ...this.extra };
  }
}

// How a networked store (PostgreSQL) fails while it is away: connection refused or reset,
// the server shutting down (SQLSTATE 57P0x), a connection exception (08xxx), or the pool's
// own messages. Such a failure is 503 store_unavailable, not an unexpected 500.
const STORE_DOWN_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', '57P01', '57P02', '57P03']);
const STORE_DOWN_MESSAGES = /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down)/i;

// How the embedded SQLite file fails for a while: another program holds its write lock past
// the busy timeout (SQLITE_BUSY, SQLITE_LOCKED), or the file cannot be written just now (a
// full disk, an I/O error, a file made read-only). The write did not happen; a retry may pass.
const SQLITE_BUSY = /^SQLITE_(BUSY|LOCKED)/;
const SQLITE_UNWRITABLE = /^SQLITE_(FULL|IOERR|READONLY|CANTOPEN)/;
export const isSqliteBusy = (code: unknown) => typeof code === 'string' && SQLITE_BUSY.test(code);
export const isSqliteUnwritable = (code: unknown) => typeof code === 'string' && SQLITE_UNWRITABLE.test(code);

/** The error as the relay reports it when it says the store is away; undefined for any other error. */
export function storeUnavailable(err: unknown): RelayError | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  const message = (err as Error | null)?.message ?? '';
  if (isSqliteBusy(code)) {
    return new RelayError('store_unavailable', `The database is locked by another program (SQLite: ${message}); nothing was changed, try again in a moment.`);
  }
  if (isSqliteUnwritable(code)) {
    return new RelayError('store_unavailable', `The database cannot be written (SQLite: ${message}); nothing was changed, try again once that is fixed.`);
  }
  const down = (typeof code === 'string' && (STORE_DOWN_CODES.has(code) || code.startsWith('08'))) || STORE_DOWN_MESSAGES.test(message);
  return down ? new RelayError('store_unavailable', 'The database does not answer; try again in a moment (the relay resumes once it is back).') : undefined;
}
