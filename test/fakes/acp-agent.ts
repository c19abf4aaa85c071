// A scripted agent of the Agent Client Protocol (its agent side from @agentclientprotocol/sdk,
// over stdio), for the ACP runner's own rules where the real agents (Codex, Gemini CLI) cannot
// be made to act on cue: a request the client does not know (a vendor extension) and updates
// that arrive after the prompt's response. No vitest.
//
// Run: node --import tsx test/fakes/acp-agent.ts; on each session/prompt it
//   1. sends the text "Before." as agent_message_chunk,
//   2. calls `_vendor/ping` twice (the client should refuse both) and reports the error code,
//   3. answers the prompt with end_turn,
//   4. 50 ms later sends "After the end." as another agent_message_chunk.
import * as acp from '@agentclientprotocol/sdk';
import { Readable, Writable } from 'node:stream';

const chunk = (sessionId: string, text: string) => ({ sessionId, update: { sessionUpdate: 'agent_message_chunk' as const, content: { type: 'text' as const, text } } });

let sessions = 0;
const app = acp
  .agent()
  .onRequest(acp.methods.agent.initialize, () => ({ protocolVersion: acp.PROTOCOL_VERSION, agentCapabilities: { loadSession: false } }))
  .onRequest(acp.methods.agent.session.new, () => ({ sessionId: `scripted-${++sessions}` }))
  .onNotification(acp.methods.agent.session.cancel, () => {})
  .onRequest(acp.methods.agent.session.prompt, async ({ params, client }) => {
    await client.notify(acp.methods.client.session.update, chunk(params.sessionId, 'Before.'));
    const codes: unknown[] = [];
    for (let i = 0; i < 2; i++) {
      try {
        await client.request<unknown>('_vendor/ping', { n: i });
        codes.push('answered');
      } catch (err) {
        codes.push((err as { code?: unknown }).code);
      }
    }
    await client.notify(acp.methods.client.session.update, chunk(params.sessionId, ` The client said ${codes.join(', ')}.`));
    setTimeout(() => void client.notify(acp.methods.client.session.update, chunk(params.sessionId, 'After the end.')).catch(() => {}), 50);
    return { stopReason: 'end_turn' as const };
  });

app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>));
