import { parseArgs } from 'node:util';
import { RelayClient, findRelay } from './client.js';
import { CLIENT_ENV_HELP, CLIENT_OPTIONS, UsageError, parseFlags } from './flags.js';

// askrelay users: the relay's people (docs/routing.md), for the operator. `add` prints the
// person's personal token, the one time it is shown.

export const USERS_HELP = `askrelay users — the relay's people, each with a personal token

Usage: askrelay users add <name> [--json] [--url URL]
       askrelay users list [--json] [--url URL]
       askrelay users remove <name> [--url URL]

  add <name>     make a person and print their personal token (shown once; the relay keeps
                 only its hash). A name is 1-32 lowercase letters, digits, _ or -, starting
                 with a letter; operator, everyone, relay and system are reserved.
  list           the people, by name
  remove <name>  remove a person: their token stops working at once
  --json         print the relay's answer as JSON

A personal token answers and skips cards as its person (answeredBy and the audit log name
them), approvals included; it cannot manage people or sessions. Only the relay token (the
operator's) runs these commands.

${CLIENT_ENV_HELP}`;

export async function usersCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('users', () => parseArgs({ args: argv, allowPositionals: true, strict: true, options: { ...CLIENT_OPTIONS, json: { type: 'boolean' } } }));
  const [action, name, ...rest] = positionals;
  if (values.help || !action) {
    console.log(USERS_HELP);
    return values.help ? 0 : 1;
  }
  if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}". Run "askrelay users --help".`);
  const client = new RelayClient(findRelay(values.url));
  const json = (value: unknown) => console.log(JSON.stringify(value, null, 2));
  switch (action) {
    case 'add': {
      if (!name) throw new UsageError('give the name: askrelay users add ada');
      const made = await client.addUser(name);
      if (values.json) json(made);
      else {
        console.log(`Added ${made.name}. Their personal token (shown this once; give it to them):`);
        console.log(made.token);
      }
      return 0;
    }
    case 'list': {
      if (name) throw new UsageError(`unexpected argument "${name}". Run "askrelay users --help".`);
      const { users } = await client.users();
      if (values.json) json({ users });
      else console.log(users.length ? users.map((u) => `${u.name}  (added ${u.createdAt})`).join('\n') : 'No people yet: "askrelay users add <name>" makes one.');
      return 0;
    }
    case 'remove': {
      if (!name) throw new UsageError('give the name: askrelay users remove ada');
      await client.removeUser(name);
      console.log(`Removed ${name}; their token no longer works.`);
      return 0;
    }
    default:
      throw new UsageError(`unknown action "${action}": add, list or remove. Run "askrelay users --help".`);
  }
}
