// The askrelay command. Exit codes: 0 done, 1 an error, 2 nobody answered (expired,
// skipped or cancelled) for commands that wait on a card.

const HELP = `askrelay — ask a human from any agent, answer from anywhere

Usage: askrelay <command> [options]

Commands:
  serve     run the relay (HTTP API, web page; SQLite, or PostgreSQL shared by several nodes)
  ask       ask a human a question from a script and wait for the answer
  cards     list cards (pending by default)
  answer    answer a card from the terminal
  skip      decline to answer a card
  tui       answer cards in a terminal UI (live list, arrow and number keys)
  session   start, list, show, send to and stop agent sessions
  audit     print the audit log (who did what to which card); "audit verify" checks it
  channels  the chat channels (Telegram, Slack, Discord, Mattermost) and their outboxes
  mcp       askrelay's MCP server over stdio, for MCP clients that spawn a process
  nodes     the relay's nodes (several on one PostgreSQL): who is alive, what each holds
  users     the relay's people and their personal tokens (add, list, remove)
  routes    the rules that send each card to the right people and chats (show, set, check)
  migrate   copy an embedded relay (its SQLite file) into an empty PostgreSQL database
  doctor    check a relay and its set-up (token, files, store, providers, chat); say what is wrong
  demo      try it without any key: scripted Claude and DeepSeek agents ask you

Exit status: 0 done, 1 an error, 2 nobody answered ("ask": expired, skipped, cancelled).
Client commands find the relay through --url or ASKRELAY_URL and read the token from
ASKRELAY_TOKEN or <ASKRELAY_DATA or ./.askrelay>/token.

Run "askrelay <command> --help" for a command's options.`;

type Command = (argv: string[]) => Promise<number>;

// Loaded on use: the client commands start in half the time without the server's modules.
const COMMANDS: Record<string, Command> = {
  serve: async (argv) => (await import('./serve-command.js')).serveCommand(argv),
  ask: async (argv) => (await import('./ask-command.js')).askCommand(argv),
  cards: async (argv) => (await import('./cards-command.js')).cardsCommand(argv),
  answer: async (argv) => (await import('./answer-command.js')).answerCommand(argv),
  skip: async (argv) => (await import('./skip-command.js')).skipCommand(argv),
  tui: async (argv) => (await import('./tui/tui-command.js')).tuiCommand(argv),
  session: async (argv) => (await import('./session-command.js')).sessionCommand(argv),
  audit: async (argv) => (await import('./audit-command.js')).auditCommand(argv),
  channels: async (argv) => (await import('./channels-command.js')).channelsCommand(argv),
  mcp: async (argv) => (await import('./mcp-command.js')).mcpCommand(argv),
  nodes: async (argv) => (await import('./nodes-command.js')).nodesCommand(argv),
  users: async (argv) => (await import('./users-command.js')).usersCommand(argv),
  routes: async (argv) => (await import('./routes-command.js')).routesCommand(argv),
  migrate: async (argv) => (await import('./migrate-command.js')).migrateCommand(argv),
  doctor: async (argv) => (await import('./doctor-command.js')).doctorCommand(argv),
  demo: async (argv) => (await import('./demo-command.js')).demoCommand(argv),
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(HELP);
    return name ? 0 : 1;
  }
  if (name === '--version' || name === '-v') {
    const { VERSION } = await import('../version.js');
    console.log(VERSION);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    console.error(`askrelay: unknown command "${name}". Run "askrelay --help" for the list.`);
    return 1;
  }
  try {
    return await command(rest);
  } catch (err) {
    console.error(`askrelay ${name}: ${(err as Error).message}`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
