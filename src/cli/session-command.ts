import { parseArgs } from 'node:util';
import type { StartSession } from '../sessions/model.js';
import { findRelay } from './client.js';
import { CLIENT_ENV_HELP, CLIENT_OPTIONS, UsageError, parseFlags, parseLabels } from './flags.js';
import { SessionClient } from './session-client.js';
import { followAndReport } from './session-follow.js';
import { cardText, describe, entryText, providersHelp, sessionHeader, sessionsTable } from './session-format.js';

// askrelay session start|list|show|send|stop: run agent sessions on the relay from a
// terminal, read their transcripts and follow them while they work. Following is in
// session-follow.ts, how sessions look in session-format.ts.

export const SESSION_HELP = `askrelay session — start, watch and steer agent sessions on the relay

Usage: askrelay session <subcommand> [options]

  start --provider P "<prompt>"   start a session on a provider with a first prompt
  list                            list the sessions
  show <session-id>               a session's status and transcript
  send <session-id> "<text>"      the next message for an idle session
  stop <session-id>               stop a session (its open cards are cancelled)

The agents' questions become cards: answer them on the relay's page or with
"askrelay cards" and "askrelay answer". Exit status: 0 done, 1 an error (the relay's
own message when it refused, e.g. an unknown session or one that is busy).

Run "askrelay session <subcommand> --help" for its options.`;

export const START_HELP = `askrelay session start — start an agent session

Usage: askrelay session start --provider P "<prompt>" [--engine E] [--model M] [--manual]
                              [--agents-may-answer] [--plan] [--label K=V]... [--follow] [--json]
                              [--url URL]

  --provider P         the provider (required): one the relay lists below
  --engine E           one of the provider's engines (default: the one marked below)
  --model M            the model (default: the provider's, e.g. ANTHROPIC_MODEL on the relay)
  --manual             relay mode manual: when nobody answers a card in time, the agent
                       stops and waits for your next message (default autopilot: it goes
                       on with its best judgement)
  --agents-may-answer  let other agents answer this session's cards (answer_question)
  --label K=V          a label for routing (repeat for several); the session's cards carry it
  --plan               Codex only: start in its Plan mode, where it plans before it changes
                       anything and asks its questions (request_user_input) as cards
  --follow, -f         print the transcript as it grows until the turn ends (idle),
                       the session is stopped or fails
  --json               print the session as JSON (with --follow: once the turn ends)

Prints "Started <id> (<provider>, <engine>, <model>): <status>." and how to follow it.
With --follow, exit 1 when the session fails.`;

export const LIST_HELP = `askrelay session list — list the sessions

Usage: askrelay session list [--json] [--url URL]

One row per session: ID, PROVIDER, ENGINE, MODEL, STATUS, MODE (autopilot or manual)
and UPDATED (how long ago it last changed). --json prints {"sessions": [...]} as the
relay returns it. Statuses: starting, running, waiting (a card is open), idle (the turn
ended; send the next message), stuck (no activity for long), stopped, failed.

${CLIENT_ENV_HELP}`;

export const SHOW_HELP = `askrelay session show — a session's status and transcript

Usage: askrelay session show <session-id> [--follow] [--json] [--url URL]

Prints the session (provider, engine, model, status, relay mode), then its transcript,
one entry per line: the time, who (user, assistant, tool, system) and the text. A session
waiting on a card also shows the card and how to answer it.

  --follow, -f   keep printing new entries until the turn ends, the session is stopped
                 or fails
  --json         print the session with its transcript as JSON

${CLIENT_ENV_HELP}`;

export const SEND_HELP = `askrelay session send — send the next message to an idle session

Usage: askrelay session send <session-id> "<text>" [--follow] [--json] [--url URL]

A session takes a message when it is idle (its turn ended). While the agent works or
waits on a card the relay refuses it (exit 1, "The agent is waiting on a card; …");
a stopped session is exit 1 too.

  --follow, -f   print the transcript as it grows until the turn ends
  --json         print the session as JSON (with --follow: once the turn ends)

${CLIENT_ENV_HELP}`;

export const STOP_HELP = `askrelay session stop — stop a session

Usage: askrelay session stop <session-id> [--json] [--url URL]

The agent's work ends and its open cards are cancelled. Prints "Stopped <id>." (with
--json: the session). Stopping a stopped or failed session is fine.

${CLIENT_ENV_HELP}`;

const HELPS: Record<string, string> = { list: LIST_HELP, show: SHOW_HELP, send: SEND_HELP, stop: STOP_HELP };

type Subcommand = (argv: string[]) => Promise<number>;

const SUBCOMMANDS: Record<string, Subcommand> = { start, list, show, send, stop };

export async function sessionCommand(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(SESSION_HELP);
    return name ? 0 : 1;
  }
  const sub = SUBCOMMANDS[name];
  if (!sub) throw new UsageError(`unknown subcommand "${name}"; use start, list, show, send or stop. Run "askrelay session --help".`);
  return sub(rest);
}

// ---------------------------------------------------------------------------
// Subcommands

/** Help waits this long for the relay's providers before printing without them. */
const PROVIDERS_TIMEOUT_MS = 3000;

const FOLLOW_OPTION = { follow: { type: 'boolean', short: 'f' } } as const;

async function start(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('session start', () =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        ...CLIENT_OPTIONS,
        ...FOLLOW_OPTION,
        provider: { type: 'string', short: 'p' },
        engine: { type: 'string', short: 'e' },
        model: { type: 'string', short: 'm' },
        manual: { type: 'boolean' },
        'agents-may-answer': { type: 'boolean' },
        plan: { type: 'boolean' },
        label: { type: 'string', multiple: true },
      },
    }),
  );
  if (values.help) return startHelp(values.url);
  if (!values.provider?.trim()) {
    throw new UsageError('give the provider: askrelay session start --provider claude "<prompt>" ("askrelay session start --help" lists the relay\'s providers).');
  }
  const prompt = onePositional(positionals, 'the prompt', 'askrelay session start --provider claude "Help me pick a database"');
  const input = {
    provider: values.provider.trim().toLowerCase(),
    ...(values.engine ? { engine: values.engine.trim().toLowerCase() } : {}),
    ...(values.model ? { model: values.model.trim() } : {}),
    prompt,
    ...(values.manual ? { relayMode: 'manual' } : {}),
    ...(values['agents-may-answer'] ? { agentsMayAnswer: true } : {}),
    ...(values.plan ? { plan: true } : {}),
    ...(values.label?.length ? { labels: parseLabels(values.label) } : {}),
  } as StartSession;
  const client = clientFor(values.url);
  const session = await client.start(input);
  if (values.follow) return followAndReport(client, session, values.json ?? false, 0);
  if (values.json) {
    console.log(JSON.stringify(session, null, 2));
  } else {
    console.log(`Started ${session.id} (${describe(session)}): ${session.status}.`);
    console.log(`Follow it with "askrelay session show ${session.id} --follow"; answer its cards on the relay's page or with "askrelay cards" and "askrelay answer".`);
  }
  return 0;
}

async function list(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('session list', () =>
    parseArgs({ args: argv, allowPositionals: true, strict: true, options: CLIENT_OPTIONS }),
  );
  if (values.help) return help('list');
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}". Run "askrelay session list --help".`);
  const sessions = await clientFor(values.url).list();
  if (values.json) console.log(JSON.stringify({ sessions }, null, 2));
  else console.log(sessions.length ? sessionsTable(sessions) : 'No sessions.');
  return 0;
}

async function show(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('session show', () =>
    parseArgs({ args: argv, allowPositionals: true, strict: true, options: { ...CLIENT_OPTIONS, ...FOLLOW_OPTION } }),
  );
  if (values.help) return help('show');
  const id = oneId(positionals, 'show');
  const client = clientFor(values.url);
  const session = await client.get(id);
  if (values.follow) return followAndReport(client, session, values.json ?? false, 0);
  if (values.json) {
    console.log(JSON.stringify(session, null, 2));
    return 0;
  }
  console.log(sessionHeader(session));
  const transcript = session.transcript ?? [];
  if (transcript.length) console.log(`\n${transcript.map(entryText).join('\n')}`);
  if (session.status === 'waiting') {
    const cards = await client.pendingCards(session.id);
    if (cards.length) console.log(`\n${cards.map(cardText).join('\n')}`);
  }
  return 0;
}

async function send(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('session send', () =>
    parseArgs({ args: argv, allowPositionals: true, strict: true, options: { ...CLIENT_OPTIONS, ...FOLLOW_OPTION } }),
  );
  if (values.help) return help('send');
  if (positionals.length === 0) throw new UsageError('give the session id and the message: askrelay session send <session-id> "<text>".');
  const [id, ...words] = positionals;
  const text = onePositional(words, 'the message', `askrelay session send ${id} "Use SQLite after all"`);
  const client = clientFor(values.url);
  // Following prints from the message on: what came before is not repeated.
  const before = values.follow ? ((await client.get(id)).transcript?.length ?? 0) : 0;
  const session = await client.send(id, text);
  if (values.follow) return followAndReport(client, session, values.json ?? false, before);
  if (values.json) console.log(JSON.stringify(session, null, 2));
  else console.log(`Sent to ${session.id}: ${session.status}.`);
  return 0;
}

async function stop(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('session stop', () =>
    parseArgs({ args: argv, allowPositionals: true, strict: true, options: CLIENT_OPTIONS }),
  );
  if (values.help) return help('stop');
  const session = await clientFor(values.url).stop(oneId(positionals, 'stop'));
  console.log(values.json ? JSON.stringify(session, null, 2) : `Stopped ${session.id}.`);
  return 0;
}

/** START_HELP, then the providers as the relay lists them (GET /api/providers): the help follows the relay's registry. */
async function startHelp(url: string | undefined): Promise<number> {
  console.log(START_HELP);
  let providers: string;
  try {
    providers = `Providers and engines on the relay:\n${providersHelp(await clientFor(url).providers(PROVIDERS_TIMEOUT_MS))}`;
  } catch (err) {
    providers = `Providers and engines: a running relay lists them (GET /api/providers); this one did not: ${(err as Error).message}`;
  }
  console.log(`\n${providers}\n\n${CLIENT_ENV_HELP}`);
  return 0;
}

function help(name: string): number {
  console.log(HELPS[name]);
  return 0;
}

function clientFor(url: string | undefined): SessionClient {
  return new SessionClient(findRelay(url));
}

function oneId(positionals: string[], sub: string): string {
  if (positionals.length !== 1 || !positionals[0].trim()) throw new UsageError(`give exactly one session id: askrelay session ${sub} <session-id>.`);
  return positionals[0].trim();
}

function onePositional(positionals: string[], what: string, example: string): string {
  if (positionals.length === 0 || !positionals[0].trim()) throw new UsageError(`give ${what}, e.g. ${example}.`);
  if (positionals.length > 1) throw new UsageError(`give ${what} as one quoted argument (got ${positionals.length} arguments).`);
  return positionals[0];
}
