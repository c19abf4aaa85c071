import { parseArgs } from 'node:util';
import { RelayClient, findRelay } from './client.js';
import { CLIENT_ENV_HELP, CLIENT_OPTIONS, UsageError, parseFlags } from './flags.js';

export const SKIP_HELP = `askrelay skip — decline to answer a card

Usage: askrelay skip <card-id> [--json] [--url URL]

The card becomes "skipped" and whoever waits on it is told nobody answered.
Prints "Skipped <id>." (with --json: the card). Skipping a skipped card is fine;
skipping an answered or expired one is an error (exit 1).

${CLIENT_ENV_HELP}`;

export async function skipCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('skip', () =>
    parseArgs({ args: argv, allowPositionals: true, strict: true, options: CLIENT_OPTIONS }),
  );
  if (values.help) {
    console.log(SKIP_HELP);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError('give exactly one card id: askrelay skip <card-id>.');
  const card = await new RelayClient(findRelay(values.url)).skip(positionals[0]);
  console.log(values.json ? JSON.stringify(card, null, 2) : `Skipped ${card.id}.`);
  return 0;
}
