import type Anthropic from '@anthropic-ai/sdk';
import { createSdkMcpServer, tool, type McpSdkServerConfigWithInstance } from '@anthropic-ai/claude-agent-sdk';
import { z, type ZodRawShape } from 'zod';
import type { RelayToolDefinition, RelayToolResult } from '../../src/sessions/relay-tool.js';

// The relay tool (list_questions, answer_question, start_session, watch_session) in Claude's
// two forms: plain Messages-API tool definitions for the `messages` engine, and an in-process
// MCP server for Claude Code (the `code` engine), which names its tools mcp__askrelay__<name>.
// Both hand every call to the session's RunnerContext.relayTools.

/** The in-process MCP server's name: Claude Code shows its tools as `mcp__askrelay__<tool>`. */
export const RELAY_MCP_SERVER = 'askrelay';
const MCP_PREFIX = `mcp__${RELAY_MCP_SERVER}__`;

/** Claude Code's name for a relay tool. */
export const relayMcpToolName = (name: string) => `${MCP_PREFIX}${name}`;

/** The relay tool behind one of Claude Code's tool names (`mcp__askrelay__list_questions` → `list_questions`). */
export function relayToolOfMcpName(name: string): string | undefined {
  return name.startsWith(MCP_PREFIX) ? name.slice(MCP_PREFIX.length) : undefined;
}

/** The relay tool definitions in the Messages API's form. */
export function anthropicRelayTools(definitions: readonly RelayToolDefinition[]): Anthropic.Tool[] {
  return definitions.map((d) => ({ name: d.name, description: d.description, input_schema: d.inputSchema as Anthropic.Tool.InputSchema }));
}

/** The tool_result block the model reads for a relay tool call. */
export function relayToolResultBlock(toolUseId: string, result: RelayToolResult): Anthropic.ToolResultBlockParam {
  return { type: 'tool_result', tool_use_id: toolUseId, content: result.text, ...(result.isError ? { is_error: true } : {}) };
}

const CALL_TIMEOUT_MS = 8 * 24 * 3600 * 1000;

type CallRelayTool = (name: string, args: unknown, toolUseId: string | undefined) => Promise<RelayToolResult>;

/**
 * The relay tool as an in-process SDK MCP server for Claude Code. Claude Code puts the
 * tool_use id of each call in the request's `_meta["claudecode/toolUseId"]`; `call` gets it,
 * so an approval card re-attaches to the same call.
 */
export function relayMcpServer(definitions: readonly RelayToolDefinition[], call: CallRelayTool): McpSdkServerConfigWithInstance {
  const tools = definitions.map((definition) =>
    tool(definition.name, definition.description, mcpInputShape(definition), async (args: unknown, extra: unknown) => {
      const result = await call(definition.name, args, toolUseIdOf(extra));
      return { content: [{ type: 'text' as const, text: result.text }], ...(result.isError ? { isError: true } : {}) };
    }),
  );
  // An approval card may wait days: the call's own timeout must never cut that short (cards
  // wait at most 7 days; Node timers hold up to ~24 days).
  return createSdkMcpServer({ name: RELAY_MCP_SERVER, version: '1.0.0', tools, alwaysLoad: true, timeout: CALL_TIMEOUT_MS });
}

/**
 * The MCP tool's input shape (zod 4, which the agent SDK takes): one field per property of the
 * relay tool's JSON schema, whose JSON schema is that property's, so Claude Code's model sees
 * exactly the schema the messages engine sends. The fields accept any value: the relay tool
 * checks its input itself and answers bad input with one sentence (is_error), as it does on
 * every surface, instead of the MCP SDK's list of zod issues. Only a missing required field is
 * refused by the MCP server before the relay tool sees the call.
 */
export function mcpInputShape(definition: RelayToolDefinition): ZodRawShape {
  const properties = (definition.inputSchema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(definition.inputSchema.required) ? (definition.inputSchema.required as string[]) : []);
  return Object.fromEntries(
    Object.entries(properties).map(([key, schema]) => {
      const field = z.unknown().meta(schema);
      return [key, required.has(key) ? field : field.optional()];
    }),
  );
}

function toolUseIdOf(extra: unknown): string | undefined {
  const meta = (extra as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const id = meta?.['claudecode/toolUseId'];
  return typeof id === 'string' && id ? id : undefined;
}
