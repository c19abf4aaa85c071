import { parseArgs } from 'node:util';
import { RelayClient, findRelay } from './client.js';
import { CLIENT_ENV_HELP, CLIENT_OPTIONS, UsageError, parseFlags } from './flags.js';

// askrelay users: the relay's people (docs/routing.md), for the operator. `add` prints the
// person's personal token, the one time it is shown.

export const USERS_HELP = `askrelay users — the relay's people, each with a personal token

Usage: askrelay users add <name> [--json] [--url URL]
       askrelay users list [--json] [--url URL]
       askrelay users remove <name> [--url URL]
       askrelay users link <name> <platform>:<user id> [--url URL]
       askrelay users unlink <name> <platform>:<user id> [--url URL]

  add <name>     make a person and print their personal token (shown once; the relay keeps
                 only its hash). A name is 1-32 lowercase letters, digits, _ or -, starting
                 with a letter; operator, everyone, relay, system and the chat
                 platforms' names are reserved.
  list           the people, by name
  remove <name>  remove a person: their token and their page logins stop working at once
  link <name> <platform>:<user id>
                 record a chat user's taps and replies as this person, e.g.
                 "askrelay users link ada telegram:123456789" (the platform's user id:
                 telegram, slack, discord or mattermost); unlink undoes it
  --json         print the relay's answer as JSON

A personal token answers and skips cards as its person (answeredBy and the audit log name
them), approvals included, and gets the push notifications of the cards routes send to its
person ("askrelay routes"); it cannot manage people, routes or sessions. Only the relay
token (the operator's) runs these commands.

${CLIENT_ENV_HELP}`;

export async function usersCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('users', () => parseArgs({ args: argv, allowPositionals: true, strict: true, options: { ...CLIENT_OPTIONS, json: { type: 'boolean' } } }));
  const [action, name, link, ...rest] = positionals;
  if (values.help || !action) {
    console.log(USERS_HELP);
    return values.help ? 0 : 1;
  }
  const extra = action === 'link' || action === 'unlink' ? rest[0] : (link ?? rest[0]);
  if (extra) throw new UsageError(`unexpected argument "${extra}". Run "askrelay users --help".`);
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
      else console.log(users.length ? users.map((u) => `${u.name}  (added ${u.createdAt}${u.links.length ? `; ${u.links.join(', ')}` : ''})`).join('\n') : 'No people yet: "askrelay users add <name>" makes one.');
      return 0;
    }
    case 'remove': {
      if (!name) throw new UsageError('give the name: askrelay users remove ada');
      await client.removeUser(name);
      console.log(`Removed ${name}; their token no longer works.`);
      return 0;
    }
    case 'link':
    case 'unlink': {
      if (!name || !link) throw new UsageError(`give the person and the chat user: askrelay users ${action} ada telegram:123456789`);
      if (action === 'link') {
        await client.linkUser(name, link);
        console.log(`Linked ${link} to ${name}: their taps and replies are recorded as ${name}.`);
      } else {
        await client.unlinkUser(name, link);
        console.log(`Unlinked ${link} from ${name}.`);
      }
      return 0;
    }
    default:
      throw new UsageError(`unknown action "${action}": add, list, remove, link or unlink. Run "askrelay users --help".`);
  }
}
