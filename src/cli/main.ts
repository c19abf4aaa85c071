import { serveCommand } from './serve-command.js';

// The askrelay command. Exit codes: 0 done, 1 an error, 2 nobody answered (expired,
// skipped or cancelled) for commands that wait on a card.

const HELP = `askrelay — ask a human from any agent, answer from anywhere

Usage: askrelay <command> [options]

Commands:
  serve     run the relay (HTTP API, web page, SQLite store)

Run "askrelay <command> --help" for a command's options.`;

type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  serve: serveCommand,
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
