// Shared pieces of the client commands' flag handling.

/** A mistake in how a command was called; main prints it like any other error (exit 1). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Runs node:util parseArgs and turns its complaints into one line that points at --help. */
export function parseFlags<T>(command: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    const message = (err as Error).message.replace(/ To specify a positional argument.*$/, '');
    throw new UsageError(`${message} Run "askrelay ${command} --help".`);
  }
}

/** Options every client command takes. */
export const CLIENT_OPTIONS = {
  url: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export const CLIENT_ENV_HELP = `The relay: --url URL, else env ASKRELAY_URL, else http://127.0.0.1:$ASKRELAY_PORT (default 7070).
The token: env ASKRELAY_TOKEN, else the file <ASKRELAY_DATA or ./.askrelay>/token that "askrelay serve" wrote.`;

/** --label key=value, repeated: the labels a card or session carries for routing (docs/routing.md). */
export function parseLabels(values: readonly string[] | undefined): Record<string, string> | undefined {
  if (!values?.length) return undefined;
  const labels: Record<string, string> = {};
  for (const text of values) {
    const at = text.indexOf('=');
    if (at <= 0 || at === text.length - 1) throw new UsageError(`--label takes key=value, e.g. --label team=payments (got "${text}").`);
    labels[text.slice(0, at).trim()] = text.slice(at + 1).trim();
  }
  return labels;
}
