import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseRoutes, type RouteRule, type Routes } from '../routing/rules.js';
import { RelayClient, findRelay } from './client.js';
import { CLIENT_ENV_HELP, CLIENT_OPTIONS, UsageError, parseFlags } from './flags.js';

// askrelay routes: the rules that send each card to the right people and chats
// (docs/routing.md). `show` and `set` talk to the relay (the operator's token); `check`
// reads a file here, so a change can be checked before it is deployed.

export const ROUTES_HELP = `askrelay routes — the rules that send each card to the right people and chats

Usage: askrelay routes [show] [--json] [--url URL]
       askrelay routes set <file> [--url URL]
       askrelay routes check <file>

  show          the relay's routes, in order (the first rule a card matches wins)
  set <file>    replace them with the file's (a list of rules, or {"routes": [...]}), on
                every node; the relay writes them to its routes.json too. "-" reads stdin.
  check <file>  read a routes file without a relay: say what is wrong, naming the rule
                and field, or how many rules it holds (exit 1 on a mistake)
  --json        print {"routes": [...]} as the relay returns it

A rule: {"name", "match": {provider, engine, kind, tool, labels, session}, "to": [people,
"everyone", "telegram", "slack:C0123"…], "restrict", "escalate": [{"after": "15m", "to"}],
"onExpiry": {"answer": "…"}}. See docs/routing.md. Only the relay token (the operator's)
shows and sets them.

${CLIENT_ENV_HELP}`;

export async function routesCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('routes', () => parseArgs({ args: argv, allowPositionals: true, strict: true, options: { ...CLIENT_OPTIONS, json: { type: 'boolean' } } }));
  const [action = 'show', file, extra] = positionals;
  if (values.help) {
    console.log(ROUTES_HELP);
    return 0;
  }
  const unexpected = action === 'show' ? file : extra;
  if (unexpected) throw new UsageError(`unexpected argument "${unexpected}". Run "askrelay routes --help".`);
  switch (action) {
    case 'show': {
      const { routes } = await new RelayClient(findRelay(values.url)).routes();
      console.log(values.json ? JSON.stringify({ routes }, null, 2) : routesText(routes));
      return 0;
    }
    case 'check': {
      if (!file) throw new UsageError('give the file: askrelay routes check routes.json');
      const routes = readRoutes(file);
      console.log(`${file}: ${routes.length} rule${routes.length === 1 ? '' : 's'}, all valid.`);
      return 0;
    }
    case 'set': {
      if (!file) throw new UsageError('give the file: askrelay routes set routes.json');
      const { routes } = await new RelayClient(findRelay(values.url)).putRoutes(readRoutes(file));
      console.log(`The relay routes by ${routes.length} rule${routes.length === 1 ? '' : 's'} now.`);
      return 0;
    }
    default:
      throw new UsageError(`unknown action "${action}": show, set or check. Run "askrelay routes --help".`);
  }
}

/** The routes in a file (or stdin), checked here: a mistake is a UsageError naming the rule and field. */
function readRoutes(file: string): Routes {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${file}: not valid JSON (${(err as Error).message}).`);
  }
  const parsed = parseRoutes(value);
  if ('error' in parsed) throw new UsageError(`${file}: ${parsed.error}.`);
  return parsed.routes;
}

/** One paragraph per rule: its name, what it matches, where it sends cards. */
export function routesText(routes: Routes): string {
  if (!routes.length) return 'No routes: every card goes to everyone. "askrelay routes set <file>" sets them.';
  return routes.map((rule, i) => ruleText(rule, i + 1)).join('\n');
}

function ruleText(rule: RouteRule, n: number): string {
  const match = Object.entries(rule.match)
    .map(([key, value]) => (key === 'labels' ? Object.entries(value as Record<string, string>).map(([k, v]) => `${k}=${v}`).join(' ') : `${key}=${([] as string[]).concat(value as string | string[]).join('|')}`))
    .join(' ');
  const lines = [`${n}. ${rule.name}: ${match || 'every card'} → ${rule.to.join(', ')}${rule.restrict ? ' (only them)' : ''}`];
  for (const step of rule.escalate ?? []) lines.push(`   after ${step.after}: also ${step.to.join(', ')}`);
  if (rule.onExpiry) lines.push(`   at expiry: answered "${rule.onExpiry.answer}"`);
  return lines.join('\n');
}
