import { parseArgs } from 'node:util';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { isJSONRPCRequest, isJSONRPCResultResponse, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { findRelay, type RelayTarget } from './client.js';
import { CLIENT_ENV_HELP, UsageError, parseFlags } from './flags.js';

// askrelay mcp: a stdio MCP server for clients that only spawn processes. It is a pipe:
// every JSON-RPC message read from stdin is POSTed to the relay's Streamable HTTP endpoint
// (/mcp, or /mcp/openclaw), and every message the relay sends back is written to stdout.
// Nothing else ever goes to stdout; all diagnostics go to stderr.

export const MCP_HELP = `askrelay mcp — askrelay's MCP server over stdio, for clients that spawn a process

Usage: askrelay mcp [--url URL] [--dialect cursor|openclaw]

Reads MCP (JSON-RPC, one message a line) on stdin and writes the relay's answers to
stdout; everything is forwarded to the relay's Streamable HTTP endpoint with the token.
  --dialect cursor     ask_user in the Cursor dialect, at <relay>/mcp (default)
  --dialect openclaw   ask_user in the OpenClaw dialect, at <relay>/mcp/openclaw

Exits 0 when stdin closes; 1 with a message on stderr when the relay cannot be reached
or refuses the token (the waiting request gets a JSON-RPC error first).

${CLIENT_ENV_HELP}`;

const DIALECT_PATHS = { cursor: 'mcp', openclaw: 'mcp/openclaw' } as const;
type Dialect = keyof typeof DIALECT_PATHS;

/** JSON-RPC error code for "the relay could not be reached or refused us" (implementation-defined range). */
const RELAY_ERROR = -32000;

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
  if (!(dialect in DIALECT_PATHS)) throw new UsageError(`--dialect must be cursor or openclaw, not "${values.dialect}".`);
  const target = findRelay(values.url);
  const code = await bridge(target, new URL(DIALECT_PATHS[dialect], target.url));
  // Whatever the HTTP side still holds open (an SSE stream being torn down) must not keep the
  // process alive once stdin is gone; the timer itself does not keep it alive either.
  setTimeout(() => process.exit(code), 1000).unref();
  return code;
}

function bridge(target: RelayTarget, endpoint: URL): Promise<number> {
  const stdio = new StdioServerTransport();
  const http = new StreamableHTTPClientTransport(endpoint, {
    requestInit: { headers: { Authorization: `Bearer ${target.token}` } },
  });
  /** Ids of initialize requests, so the bridge can learn the protocol version from their results. */
  const initializing = new Set<string | number>();
  /** Errors send() rejected with, which the transport also passes to onerror. */
  const handled = new WeakSet<Error>();

  return new Promise<number>((resolve) => {
    let done = false;
    const finish = async (code: number, message?: string) => {
      if (done) return;
      done = true;
      if (message) process.stderr.write(`askrelay mcp: ${message}\n`);
      process.stdin.off('end', onEnd);
      await stdio.close().catch(() => {});
      // Ends the MCP session at the relay (a waiting call's card is then cancelled after the grace).
      if (code === 0) await http.terminateSession().catch(() => {});
      await http.close().catch(() => {});
      resolve(code);
    };
    /** send()s still on their way to the relay: stdin may end right behind a message. */
    const sending = new Set<Promise<void>>();
    // A send() resolves once the relay accepted the message (a long call's answer streams on
    // afterwards), so this waits only long enough to report a relay that is down or refuses us.
    const onEnd = () => void Promise.allSettled([...sending]).then(() => finish(0));
    process.stdin.on('end', onEnd);

    stdio.onmessage = (message: JSONRPCMessage) => {
      if (isJSONRPCRequest(message) && message.method === 'initialize') initializing.add(message.id);
      const sent = http.send(message).catch(async (err: unknown) => {
        if (err instanceof Error) handled.add(err);
        if (done) return;
        const { text, fatal } = describe(err, target, endpoint);
        if (isJSONRPCRequest(message)) {
          await stdio.send({ jsonrpc: '2.0', id: message.id, error: { code: RELAY_ERROR, message: text } }).catch(() => {});
        }
        if (fatal) await finish(1, text);
        else process.stderr.write(`askrelay mcp: ${text}\n`);
      });
      sending.add(sent);
      void sent.finally(() => sending.delete(sent));
    };
    http.onmessage = (message: JSONRPCMessage) => {
      if (isJSONRPCResultResponse(message) && initializing.delete(message.id)) {
        const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
        if (typeof version === 'string') http.setProtocolVersion(version);
      }
      void stdio.send(message);
    };
    // The transport reports send() failures here too, just before send() rejects; those are
    // handled above, so only the rest (the relay's server stream coming and going) is logged.
    http.onerror = (err) => {
      setTimeout(() => {
        if (done || handled.has(err) || (err instanceof StreamableHTTPError && err.code === 405)) return;
        process.stderr.write(`askrelay mcp: ${err.message}\n`);
      });
    };
    stdio.onerror = (err) => process.stderr.write(`askrelay mcp: stdin: ${err.message}\n`);
    stdio.onclose = () => void finish(0);
    http.onclose = () => void finish(0);

    void (async () => {
      await http.start();
      await stdio.start();
    })();
  });
}

/** One sentence for stderr and for the JSON-RPC error; fatal when the bridge cannot go on. */
function describe(err: unknown, target: RelayTarget, endpoint: URL): { text: string; fatal: boolean } {
  if (err instanceof StreamableHTTPError) {
    if (err.code === 401 || err.code === 403) {
      return {
        text: `the relay at ${target.url} refused the token from ${target.tokenSource}; use the token "askrelay serve" printed (kept in its data folder's token file).`,
        fatal: true,
      };
    }
    if (err.code === 404) {
      return { text: `the relay has no MCP endpoint or session at ${endpoint.href} (a relay restart ends sessions; restart this server): ${err.message}`, fatal: true };
    }
    return { text: `the relay refused the message: ${err.message}`, fatal: false };
  }
  const e = err as Error & { cause?: Error };
  const reason = e?.cause?.message || e?.message || String(err);
  return {
    text: `cannot reach the relay at ${target.url} (${reason}); is "askrelay serve" running there? Set --url or ASKRELAY_URL.`,
    fatal: true,
  };
}
