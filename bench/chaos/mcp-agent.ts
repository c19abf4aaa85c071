import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { watchedResponse } from '../../src/cli/mcp-bridge.js';
import { CALL_KEY } from '../../src/mcp-call-key.js';
import type { Outcome } from './history.js';
import { COLOURS, GIVE_UP_AFTER_MS, cardText, pause, type Workload } from './workload.js';

// An agent asking through MCP with the real SDK client (Streamable HTTP through the
// balancer): each ask_user call carries a call key of its own, and when the call is cut off
// (its node killed: the response stream ends before the result; or the session is gone: 404)
// the agent opens a new session and sends the same call again with the same key, as an MCP
// client that survives its server does (askrelay mcp's bridge does the same). The relay must
// hand the re-sent call the card it already asked, answered or not.

interface ToolResult {
  structuredContent?: { status?: Outcome; cardId?: string; answers?: { selected?: string[] }[] };
  isError?: boolean;
  content?: { text?: string }[];
}

/** One attempt of a call: its result, or why it was cut off. */
async function attempt(w: Workload, name: string, key: string, args: unknown, timeoutMs: number): Promise<ToolResult> {
  let cutOff!: (why: string) => void;
  const cut = new Promise<never>((_, reject) => (cutOff = (why) => reject(new Error(why))));
  // The run ending stops the wait too (the SDK would wait for its timeout).
  const onStop = () => cutOff('the run stopped');
  w.stopped.addEventListener('abort', onStop, { once: true });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', w.url), {
    requestInit: { headers: { authorization: `Bearer ${w.token}` } },
    // A call's answer comes as an event stream; the SDK waits on for ever when that stream
    // ends without it, so its end is watched here.
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      const isCall = init?.method === 'POST' && typeof init.body === 'string' && init.body.includes('"tools/call"');
      if (!isCall || res.status !== 200 || !res.body) return res;
      return watchedResponse(res, () => setTimeout(() => cutOff('the call\'s stream ended before its result'), 50));
    },
  });
  const client = new Client({ name: `askrelay-chaos-${name}`, version: '1.0.0' });
  try {
    await Promise.race([client.connect(transport), cut]);
    const call = client.callTool({ name: 'ask_user', arguments: args as Record<string, unknown>, _meta: { [CALL_KEY]: key } }, undefined, { timeout: timeoutMs });
    return (await Promise.race([call, cut])) as ToolResult;
  } finally {
    w.stopped.removeEventListener('abort', onStop);
    // Not terminateSession: a call left behind on a live node is to be re-attached, not ended.
    await client.close().catch(() => {});
  }
}

export async function mcpAgent(w: Workload, name: string): Promise<void> {
  const random = w.random.fork();
  for (let n = 1; w.asking() && !w.stopped.aborted; n++) {
    const tag = `${name}-${n}`;
    const key = `chaos-${w.options.seed}-${tag}`;
    const args = { questions: [{ question: cardText(tag), header: 'Colour', options: COLOURS.map((label) => ({ label })) }] };
    const ask = w.recorder.ask({ tag, via: 'mcp', at: Date.now() });
    const giveUpAt = ask.at + w.options.mcpWaitMs + w.options.leaseMs + GIVE_UP_AFTER_MS;
    w.recorder.count('mcp.calls');
    for (let tries = 0; !ask.got && !w.stopped.aborted && Date.now() < giveUpAt; tries++) {
      if (tries > 0) w.recorder.count('mcp.resent');
      try {
        const result = await attempt(w, name, key, args, giveUpAt - Date.now());
        const content = result.structuredContent;
        if (result.isError || !content?.status) throw new Error(`ask_user failed: ${result.content?.[0]?.text ?? JSON.stringify(result)}`);
        ask.cardId = content.cardId;
        ask.got = { outcome: content.status, ...(content.status === 'answered' ? { labels: content.answers?.[0]?.selected ?? [] } : {}), at: Date.now() };
      } catch (err) {
        w.recorder.error(name, `MCP tools/call ask_user: ${briefly(err)}`, { cause: 'mcp' });
        await pause(Math.min(200 * 2 ** tries, 2_000), w.stopped);
      }
    }
    await pause(random.between([200, 1_500]), w.stopped);
  }
}

/** The SDK's error in a few words: an HTTP refusal by its status and JSON-RPC message. */
function briefly(err: unknown): string {
  if (!(err instanceof StreamableHTTPError)) return (err as Error).message;
  const said = /"message":"([^"]*)"/.exec(err.message)?.[1];
  return `HTTP ${err.code}${said ? ` ${said}` : ''}`;
}
