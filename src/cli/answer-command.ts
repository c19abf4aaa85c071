import { parseArgs } from 'node:util';
import { asAnswered } from '../cards/answer.js';
import type { Answer, Card, Question } from '../cards/model.js';
import { questionList } from '../cards/near-miss.js';
import { parseReply } from '../cards/reply-parser.js';
import { RelayError } from '../errors.js';
import { readValues } from './answer-values.js';
import { ApiError, RelayClient, findRelay } from './client.js';
import { CLIENT_ENV_HELP, CLIENT_OPTIONS, UsageError, parseFlags } from './flags.js';
import { answerText, deliveryText } from './format.js';

export const ANSWER_HELP = `askrelay answer — answer a card

Usage: askrelay answer <card-id> <value>... [--text T] [--late] [--json] [--url URL]
       askrelay answer <card-id> <line>... [--json]            (several questions)
       askrelay answer <card-id> --answer <question>=<value> [--answer ...] [--json]

  <value>          an option, by its number (as "askrelay cards" shows it) or its label
                   (any case); "1, 3" (or 1 3) picks several options on a multi-select
                   question, split on "," ";" or newline. Anything else is typed text:
                   quote it. URLs, paths and times like 14:30 are never split. A value
                   that is only a number but no option's, or one letter off a label
                   ("SQLit"), is refused with the options listed: send it with --text.
  <line>           on a card with several questions, one value per question in order,
                   or keyed: "db: sqlite", "langs = 1, 3", "Header: …", "2: …"
  --text T         typed text to send with (or instead of) the picked options; taken
                   as words, never as an option ("--text 7" sends the text 7)
  --answer Q=V     the answer to question Q (its id, header or number); V is read like
                   a value. Repeat for each question.
  --late           answer a card that expired or was cancelled: the relay keeps it
                   as the card's late answer and hands it to the agent if it still
                   can (a session the relay runs gets it when its turn ends)
  --json           print the answered card as JSON

Prints "Answered <id>: <answer>" ("Answered <id> late: …" with --late, and where
the answer got to). Exit status 0 when the relay took the answer
(sending the same answer again is fine), 1 otherwise with the relay's reason.

${CLIENT_ENV_HELP}`;

function findQuestion(card: Card, key: string): Question {
  const k = key.trim().toLowerCase();
  const q =
    card.questions.find((x) => x.id === key.trim()) ??
    card.questions.find((x) => x.id.toLowerCase() === k || x.header?.toLowerCase() === k) ??
    (/^\d+$/.test(k) ? card.questions[Number(k) - 1] : undefined);
  if (!q) throw new UsageError(`card ${card.id} has no question "${key}" (questions: ${questionList(card)}).`);
  return q;
}

/**
 * Builds the answer from positional values, --text and --answer pairs, all read by the
 * plain-text reply parser. On a card with several questions the values are the reply's
 * lines (one per question, or keyed: "db: sqlite").
 */
export function buildAnswer(card: Card, values: string[], text: string | undefined, pairs: string[]): Answer {
  const several = card.questions.length !== 1;
  if (several && (text !== undefined || (values.length && pairs.length))) {
    throw new UsageError(
      `card ${card.id} has ${card.questions.length} questions; answer with one line per question ("askrelay answer ${card.id} 'db: 1' 'name: x'") or with --answer <question>=<value> for each, not both${text !== undefined ? ', and without --text' : ''} (questions: ${questionList(card)}).`,
    );
  }
  if (several && values.length) return parseReply(card, values.join('\n'));

  const byQuestion = new Map<Question, string[]>();
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--answer takes <question>=<value>; got "${pair}".`);
    const q = findQuestion(card, pair.slice(0, eq));
    byQuestion.set(q, [...(byQuestion.get(q) ?? []), pair.slice(eq + 1)]);
  }
  if (values.length || text !== undefined) {
    const q = card.questions[0];
    byQuestion.set(q, [...(byQuestion.get(q) ?? []), ...values]);
  }
  if (byQuestion.size === 0) throw new UsageError('give the answer: askrelay answer <card-id> <value>... (see --help).');
  const answer: Answer = {};
  for (const [q, qValues] of byQuestion) {
    answer[q.id] = readValues(card, q, qValues, several ? undefined : text);
  }
  return answer;
}

/** A value refused as a slip (a number that is no option's, "SQLit") says how to send it as words. */
function withTextHint(card: Card, build: () => Answer, values: string[]): Answer {
  try {
    return build();
  } catch (err) {
    if (!(err instanceof RelayError) || err.code !== 'ambiguous_reply') throw err;
    if (card.questions.length !== 1) throw new RelayError(err.code, `${err.message} To send a value as text, put it in quotes inside its line ('2: "7"').`);
    const words = values.join(' ').replace(/'/g, `'\\''`);
    throw new RelayError(err.code, `${err.message} To send it as text: askrelay answer ${card.id} --text '${words}'.`);
  }
}

export async function answerCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('answer', () =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: { ...CLIENT_OPTIONS, text: { type: 'string' }, answer: { type: 'string', short: 'a', multiple: true }, late: { type: 'boolean' } },
    }),
  );
  if (values.help) {
    console.log(ANSWER_HELP);
    return 0;
  }
  const [id, ...rest] = positionals;
  if (!id) throw new UsageError('give the card id and the answer: askrelay answer <card-id> <value>... (see --help).');
  const client = new RelayClient(findRelay(values.url));
  const card = await client.getCard(id);
  const late = values.late ?? false;
  const answer = withTextHint(card, () => buildAnswer(card, rest, values.text, values.answer ?? []), rest);
  const answered = await client.answer(card.id, answer, { late }).catch((err: unknown) => {
    if (!late && err instanceof ApiError && err.code === 'card_closed' && (card.status === 'expired' || card.status === 'cancelled')) {
      throw new ApiError(err.status, err.code, `${err.message} To answer it anyway, add --late.`, err.body);
    }
    throw err;
  });
  if (values.json) {
    console.log(JSON.stringify(answered, null, 2));
    return 0;
  }
  const shown = asAnswered(answered);
  const text = answerText(shown);
  const head = `Answered ${answered.id}${answered.lateAnswer ? ' late' : ''}`;
  console.log(shown.questions.length === 1 ? `${head}: ${text}` : `${head}:\n${text.replace(/^/gm, '  ')}`);
  if (answered.lateAnswer) console.log(`The card ${answered.status === 'expired' ? 'had expired' : 'was cancelled'}; the answer is ${deliveryText(answered)}.`);
  return 0;
}
