import { parseArgs } from 'node:util';
import { parseDuration } from '../config.js';
import { findRelay } from './client.js';
import { CLIENT_ENV_HELP, UsageError, parseFlags } from './flags.js';
import { RECONNECT_FOR_MS, runBridge } from './mcp-bridge.js';

// askrelay mcp: a stdio MCP server for clients that only spawn processes, forwarding to the
// relay's /mcp (or /mcp/openclaw); the pipe itself is mcp-bridge.ts.

export const MCP_HELP = `askrelay mcp — askrelay's MCP server over stdio, for clients that spawn a process

Usage: askrelay mcp [--url URL] [--dialect cursor|openclaw]

Reads MCP (JSON-RPC, one message a line) on stdin and writes the relay's answers to
stdout; everything is forwarded to the relay's Streamable HTTP endpoint with the token.
  --dialect cursor     ask_user in the Cursor dialect, at <relay>/mcp (default)
  --dialect openclaw   ask_user in the OpenClaw dialect, at <relay>/mcp/openclaw

When the relay restarts while a question waits, the bridge opens a new MCP session and
re-sends the call; the relay hands it the same card, so the client never notices. It keeps
trying for ASKRELAY_MCP_RECONNECT (default 10m) before it gives up.

Exits 0 when stdin closes; 1 with a message on stderr when the relay cannot be reached at
the start, refuses the token, or stays away longer than ASKRELAY_MCP_RECONNECT (waiting
requests get a JSON-RPC error first).

${CLIENT_ENV_HELP}`;

const DIALECT_PATHS = { cursor: 'mcp', openclaw: 'mcp/openclaw' } as const;
type Dialect = keyof typeof DIALECT_PATHS;

export async function mcpCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('mcp', () =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: { url: { type: 'string' }, dialect: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }),
  );
  if (values.help) {
    console.log(MCP_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}". Run "askrelay mcp --help".`);
  const dialect = (values.dialect ?? 'cursor') as Dialect;
  // Own keys only: `in` would take "toString" and the rest of Object.prototype.
  if (!Object.hasOwn(DIALECT_PATHS, dialect)) throw new UsageError(`--dialect must be cursor or openclaw, not "${values.dialect}".`);
  const target = findRelay(values.url);
  const reconnectFor = process.env.ASKRELAY_MCP_RECONNECT ? parseDuration(process.env.ASKRELAY_MCP_RECONNECT) : RECONNECT_FOR_MS;
  const code = await runBridge(target, new URL(DIALECT_PATHS[dialect], target.url), reconnectFor);
  // Whatever the HTTP side still holds open (an SSE stream being torn down, a kept-alive
  // socket) must not keep the process alive once the bridge is done: an MCP client that
  // closed the pipe kills the process after 2 s (the SDK's StdioClientTransport), and the
  // exit code is how it learns why. So: exit as soon as stdout and stderr are flushed, and
  // within a second even if a reader stopped reading.
  setTimeout(() => process.exit(code), 1000).unref();
  await Promise.all([process.stdout, process.stderr].map((stream) => new Promise<void>((done) => stream.write('', () => done()))));
  process.exit(code);
}

