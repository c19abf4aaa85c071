import type Anthropic from '@anthropic-ai/sdk';

// Reads a streamed reply (the raw events of messages.create({stream: true})) into plain
// content blocks. The SDK's own MessageStream parses each tool input as it streams and
// throws on input that is not JSON, losing the reply; here the raw text is kept, and a tool
// input that does not parse becomes a marker the engine answers with a clear error, so the
// model can try again (docs/providers/claude.md, "Bad tool input").

type Block = Anthropic.ContentBlock;

/** The key a tool input that is not valid JSON is kept under, with the text the model sent. */
export const INVALID_JSON = '__invalid_json__';

export interface Reply {
  content: Block[];
  stop_reason: string | null;
}

/** Collects the reply; `onEvent` runs for every event (the engine's heartbeat). */
export async function readReply(events: AsyncIterable<Anthropic.RawMessageStreamEvent>, onEvent: () => void): Promise<Reply> {
  const blocks: Array<Record<string, unknown>> = [];
  const json = new Map<number, string>();
  let stopReason: string | null = null;
  for await (const event of events) {
    onEvent();
    if (event.type === 'content_block_start') {
      blocks[event.index] = { ...event.content_block };
      if (event.content_block.type === 'tool_use') json.set(event.index, '');
    } else if (event.type === 'content_block_delta') {
      const block = blocks[event.index];
      if (!block) continue;
      const { delta } = event;
      if (delta.type === 'text_delta') block.text = `${block.text ?? ''}${delta.text}`;
      else if (delta.type === 'input_json_delta') json.set(event.index, (json.get(event.index) ?? '') + delta.partial_json);
      else if (delta.type === 'thinking_delta') block.thinking = `${block.thinking ?? ''}${delta.thinking}`;
      else if (delta.type === 'signature_delta') block.signature = delta.signature;
      else if (delta.type === 'citations_delta') block.citations = [...((block.citations as unknown[] | null) ?? []), delta.citation];
    } else if (event.type === 'message_delta') {
      stopReason = event.delta.stop_reason;
    }
  }
  for (const [index, text] of json) {
    const block = blocks[index];
    if (block && text) block.input = parseInput(text);
  }
  return { content: blocks.filter(Boolean) as unknown as Block[], stop_reason: stopReason };
}

function parseInput(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { [INVALID_JSON]: text };
  }
}
