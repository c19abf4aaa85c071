import { parseArgs } from 'node:util';
import { RelayClient, findRelay } from './client.js';
import { CLIENT_ENV_HELP, CLIENT_OPTIONS, UsageError, parseFlags } from './flags.js';
import { cardsTable } from './format.js';

export const CARDS_HELP = `askrelay cards — list cards

Usage: askrelay cards [--status S] [--json] [--url URL]

  --status S   pending (default), answered, skipped, expired, cancelled, or all
  --json       print {"cards": [...]} as the relay returns it

The table has one row per question: ID, LEFT (time left, or the status of a closed
card), TO (when routes sent any card somewhere: the rule and who it goes to; see
docs/routing.md), HEADER, QUESTION and OPTIONS, numbered as "askrelay answer" takes
them ("[several]" when several may be picked, "(free text)" when there are none).

${CLIENT_ENV_HELP}`;

export async function cardsCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('cards', () =>
    parseArgs({ args: argv, allowPositionals: true, strict: true, options: { ...CLIENT_OPTIONS, status: { type: 'string' } } }),
  );
  if (values.help) {
    console.log(CARDS_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}". Run "askrelay cards --help".`);
  const status = values.status?.trim().toLowerCase() || 'pending';
  const client = new RelayClient(findRelay(values.url));
  const cards = await client.listCards(status === 'all' ? undefined : status);
  if (values.json) {
    console.log(JSON.stringify({ cards }, null, 2));
  } else if (cards.length === 0) {
    console.log(status === 'all' ? 'No cards.' : `No ${status} cards.`);
  } else {
    console.log(cardsTable(cards));
  }
  return 0;
}
