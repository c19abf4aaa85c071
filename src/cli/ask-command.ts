import { parseArgs } from 'node:util';
import { asAnswered } from '../cards/answer.js';
import type { Card, CardInput } from '../cards/model.js';
import { parseDuration } from '../config.js';
import { RelayClient, findRelay } from './client.js';
import { CLIENT_ENV_HELP, CLIENT_OPTIONS, UsageError, parseFlags, parseLabels } from './flags.js';
import { answerText } from './format.js';
import { waitForCard } from './wait-for-card.js';

export const ASK_HELP = `askrelay ask — ask a human one question and wait for the answer

Usage: askrelay ask "<question>" [--choice LABEL[=DESCRIPTION]]... [--multi] [--no-free-text]
                    [--header H] [--title T] [--wait DURATION] [--label K=V]... [--accept-late]
                    [--json] [--url URL]

  --choice, -c LABEL[=DESCRIPTION]
                      an option (repeat for several); no choices means a free-text
                      question. "SQLite=No server" gives the option a description;
                      write \\= for an "=" inside the label ("a\\=b=Assign").
  --no-free-text      the answer must be one of the choices: no typed words
  --multi             allow several choices (needs at least two --choice)
  --header H          short label shown above the question
  --title T           title of the card
  --wait DURATION     how long the card stays open: 10m, 2h, 90s, 500ms
                      (default: the relay's ASKRELAY_WAIT, 8h)
  --label K=V         a label for routing (repeat for several), e.g. --label team=payments
  --accept-late       when the card expires (or is cancelled), keep waiting for a
                      late answer the human gives on it, until one comes or Ctrl+C
  --json              print the closed card as JSON instead of the bare answer
  --url URL           the relay (see below)

Prints the answer: the chosen labels joined with ", ", then any typed text
(with --json: the whole card, whatever its status). Exit status: 0 answered
(late, with --accept-late), 2 nobody answered (expired, skipped or cancelled; a
line on stderr says which), 1 an error. A relay restart while waiting is survived: the wait resumes.

${CLIENT_ENV_HELP}`;

/**
 * "SQLite=No server" → label SQLite, description "No server". The first "=" not written
 * as "\=" splits; "\=" is an "=" of the label. Without a split the whole value is the label.
 */
export function choiceOption(value: string): { label: string; description?: string } {
  const split = /(?<!\\)=/.exec(value);
  const label = (split ? value.slice(0, split.index) : value).replace(/\\=/g, '=');
  if (!split) return { label };
  const description = value.slice(split.index + 1).trim();
  return description ? { label, description } : { label };
}

function cardInput(argv: string[]): { input: CardInput; json: boolean; acceptLate: boolean; url?: string } | undefined {
  const { values, positionals } = parseFlags('ask', () =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        ...CLIENT_OPTIONS,
        choice: { type: 'string', short: 'c', multiple: true },
        multi: { type: 'boolean' },
        'no-free-text': { type: 'boolean' },
        header: { type: 'string' },
        title: { type: 'string' },
        wait: { type: 'string' },
        'accept-late': { type: 'boolean' },
        label: { type: 'string', multiple: true },
      },
    }),
  );
  if (values.help) return undefined;
  if (positionals.length === 0 || !positionals[0].trim()) {
    throw new UsageError('give the question, e.g. askrelay ask "Which database?" --choice PostgreSQL --choice SQLite.');
  }
  if (positionals.length > 1) {
    throw new UsageError(`give the question as one quoted argument; options go in --choice (got ${positionals.length} arguments).`);
  }
  const choices = values.choice ?? [];
  if (values.multi && choices.length < 2) throw new UsageError('--multi needs at least two --choice options.');
  const noFreeText = values['no-free-text'] ?? false;
  if (noFreeText && !choices.length) throw new UsageError('--no-free-text needs at least one --choice: without choices the question can only be answered in words.');
  let waitSeconds: number | undefined;
  if (values.wait !== undefined) {
    try {
      waitSeconds = parseDuration(values.wait) / 1000;
    } catch (err) {
      throw new UsageError(`--wait: ${(err as Error).message}`);
    }
  }
  const labels = parseLabels(values.label);
  return {
    json: values.json ?? false,
    acceptLate: values['accept-late'] ?? false,
    url: values.url,
    input: {
      ...(values.title ? { title: values.title } : {}),
      ...(labels ? { labels } : {}),
      questions: [
        {
          text: positionals[0],
          ...(values.header ? { header: values.header } : {}),
          ...(choices.length ? { options: choices.map(choiceOption) } : {}),
          ...(noFreeText ? { freeText: false } : {}),
          ...(values.multi ? { multiSelect: true } : {}),
        },
      ],
      ...(waitSeconds !== undefined ? { waitSeconds } : {}),
    },
  };
}

const NOBODY: Record<string, (card: Card) => string> = {
  expired: (card) => `nobody answered card ${card.id} before it expired at ${card.expiresAt}.`,
  skipped: (card) => `card ${card.id} was skipped; nobody answered.`,
  cancelled: (card) => `card ${card.id} was cancelled; nobody answered.`,
};

export async function askCommand(argv: string[]): Promise<number> {
  const parsed = cardInput(argv);
  if (!parsed) {
    console.log(ASK_HELP);
    return 0;
  }
  const client = new RelayClient(findRelay(parsed.url));
  const created = await client.createCard(parsed.input);
  console.error(`askrelay ask: waiting for an answer to card ${created.id} (until ${created.expiresAt}); answer it on the relay's page or with "askrelay answer ${created.id} …".`);
  const onTrouble = (message: string) => console.error(`askrelay ask: ${message}`);
  let card = await waitForCard(client, created, { onTrouble });
  if (parsed.acceptLate && (card.status === 'expired' || card.status === 'cancelled') && !card.lateAnswer) {
    console.error(`askrelay ask: ${NOBODY[card.status](card)} Still waiting for a late answer (Ctrl+C to stop).`);
    card = await waitForCard(client, card, { onTrouble, late: true });
  }

  if (parsed.json) console.log(JSON.stringify(card, null, 2));
  // A late answer is the answer to whoever accepts it.
  const answered = parsed.acceptLate ? asAnswered(card) : card;
  if (answered.status === 'answered') {
    if (!parsed.json) console.log(answerText(answered));
    return 0;
  }
  console.error(`askrelay ask: ${(NOBODY[card.status] ?? ((c: Card) => `card ${c.id} is ${c.status}.`))(card)}`);
  return 2;
}
