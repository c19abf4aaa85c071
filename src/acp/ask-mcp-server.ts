import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AskDialect } from '../cards/ask-dialect.js';
import type { Card, CardDraft } from '../cards/model.js';
import type { RunnerContext } from '../sessions/runner.js';
import { sameSecret } from '../same-secret.js';
import { VERSION } from '../version.js';

// An MCP server (Streamable HTTP on loopback, one per session) through which an ACP agent
// that lacks a question tool asks the human: the provider's ask tool (Cursor's ask_user under
// the name the agent accepts) and the relay tool. Each call is the session's own (ctx.ask,
// ctx.relayTools), so its cards belong to the session, the session waits while they are open,
// and the runner remembers them for a restart. The agent gets the address and a token of its
// own in its private settings, with a call timeout as long as a card's wait.

export interface AskMcpServer {
  /** http://127.0.0.1:PORT/mcp */
  url: string;
  /** The bearer the agent must send (never the relay's or the session's token). */
  token: string;
  close(): Promise<void>;
}

export interface AskTool {
  /** The dialect whose ask tool this is; `name` overrides its tool's name. */
  dialect: AskDialect;
  name: string;
}

const BODY_LIMIT = 1024 * 1024;
const key = (args: unknown) => createHash('sha256').update(JSON.stringify(args ?? null)).digest('hex').slice(0, 16);

/** `askCard` opens the ask tool's card as the runner does every card (remembered until it closes). */
export async function startAskMcpServer(ctx: RunnerContext, ask: AskTool, askCard: (draft: CardDraft) => Promise<Card>): Promise<AskMcpServer> {
  const [{ Server }, { StreamableHTTPServerTransport }, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  const token = randomBytes(24).toString('base64url');
  const relayTools = ctx.relayTools;
  const tools = [{ ...ask.dialect.tool, name: ask.name }, ...(relayTools?.definitions ?? []).map(({ name, description, inputSchema }) => ({ name, description, inputSchema }))];

  /** One MCP server per request (stateless): the calls share nothing but the session. */
  const mcpServer = () => {
    const server = new Server({ name: 'askrelay', version: VERSION }, { capabilities: { tools: {} } });
    server.setRequestHandler(types.ListToolsRequestSchema, () => ({ tools }));
    server.setRequestHandler(types.CallToolRequestSchema, async (request) => {
      const { name, arguments: args } = request.params;
      if (name === ask.name) {
        const made = ask.dialect.toCardDraft(args);
        if (!made.ok) return ask.dialect.toToolError(made.error) as never;
        const card = await askCard({ ...made.draft, toolCallId: `mcp:${key(args)}` });
        // Stopped with the card open: the agent is going away, the card stays for the restart.
        if (card.status === 'pending') return ask.dialect.toToolError('The session stopped before an answer came.') as never;
        return ask.dialect.toToolResult(card) as never;
      }
      if (relayTools?.definitions.some((t) => t.name === name)) return (await relayTools.call(name, args, `mcp:${name}:${key(args)}`)) as never;
      return { content: [{ type: 'text', text: `No tool "${name}" here; the tools are ${tools.map((t) => t.name).join(', ')}.` }], isError: true };
    });
    return server;
  };

  const http = createServer(async (req, res) => {
    if (!authorized(req, token)) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'unauthorized', message: 'Send the token from the settings.' } }));
      return;
    }
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    let body: unknown;
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of req) {
        size += (chunk as Buffer).length;
        if (size > BODY_LIMIT) {
          res.writeHead(413).end();
          return;
        }
        chunks.push(chunk as Buffer);
      }
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
        return;
      }
    }
    const server = mcpServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close().catch(() => {}));
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve, reject) => http.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, token, close: () => closeServer(http) };
}

function authorized(req: IncomingMessage, token: string): boolean {
  return sameSecret(/^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim() ?? '', token);
}

function closeServer(http: HttpServer): Promise<void> {
  return new Promise((resolve) => {
    http.close(() => resolve());
    http.closeAllConnections();
  });
}
