// The JSON columns the stores keep (a card's, a session's, a transcript entry's data) are
// read through here (a session's saved provider state is not: a resume that cannot read it
// fails that session alone, and the start goes on), so a row that is not JSON (a hand edit, a broken copy) is named by its
// table and id instead of surfacing as a bare "Expected property name … at position 1" that
// stops a relay at start with nothing to go on. `askrelay migrate` refuses such rows with the
// same words (src/store/migrate-to-postgres.ts).

/** A stored row whose JSON cannot be read. */
export class UnreadableRowError extends Error {
  constructor(
    readonly table: string,
    readonly rowId: string,
    reason: string,
  ) {
    super(`the ${table} row ${rowId} is not valid JSON (${reason}); repair or delete that row, then start again`);
    this.name = 'UnreadableRowError';
  }
}

/** `data` of row `id` in `table`, parsed; UnreadableRowError when it is not JSON. */
export function parseStored<T>(table: string, id: string | number, data: string): T {
  try {
    return JSON.parse(data) as T;
  } catch (err) {
    throw new UnreadableRowError(table, String(id), (err as Error).message);
  }
}

/** The reason `data` is not JSON, or undefined when it is (for a check that names the row itself). */
export function jsonProblem(data: unknown): string | undefined {
  if (data === null || data === undefined) return undefined;
  try {
    JSON.parse(String(data));
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
