import type { AskMcpServer } from '../../src/acp/ask-mcp-server.js';
import { MCP_SERVER_NAME } from './tool.js';

// Pure: Gemini CLI's settings for a session's private HOME ($HOME/.gemini/settings.json).
// Nothing phones home (usage statistics, telemetry, auto-update off), the key in the
// environment is the login, folders are trusted (askrelay chose the working folder), and
// askrelay's MCP server is there, trusted (its tools need no permission of their own) and
// with a call timeout as long as a card may wait, so a question may wait for hours.

/** A little past the longest wait, so the card's own expiry answers first. */
const TIMEOUT_MARGIN_MS = 60_000;

export function geminiSettings(mcp: Pick<AskMcpServer, 'url' | 'token'> | undefined, waitMs: number): Record<string, unknown> {
  return {
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
    ide: { enabled: false },
    ...(mcp
      ? { mcpServers: { [MCP_SERVER_NAME]: { httpUrl: mcp.url, headers: { Authorization: `Bearer ${mcp.token}` }, timeout: waitMs + TIMEOUT_MARGIN_MS, trust: true } } }
      : {}),
  };
}
