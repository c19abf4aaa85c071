import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { AcpAgentSpec } from '../../src/acp/acp-runner.js';
import { agentHomePath, makeAgentHome, removeAgentHome } from '../../src/acp/agent-home.js';
import { agentEnv } from '../../src/sessions/agent-env.js';
import { relayGuidance } from '../../src/sessions/guidance.js';
import { lazyRunner, missingKeyRunner, type ProviderRunner } from '../../src/sessions/runner.js';
import { cursorDialect } from '../cursor/index.js';
import { geminiSettings } from './adapter.js';
import { ASK_HUMAN, GEMINI_ASK_TOOL, GEMINI_FORM } from './tool.js';

// Gemini CLI with --acp, through askrelay's ACP runner (src/acp/acp-runner.ts). Each session
// gets a private HOME holding Gemini's settings (adapter.ts) and its chats (what session/load
// reads after a restart); the endpoint comes from GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY and
// GEMINI_MODEL. Its questions reach the human through askrelay's ask_human over MCP, its
// permission requests (shell, writes) as approval cards.

export const GEMINI_ENDPOINT = { name: 'Gemini CLI', apiKeyVar: 'GEMINI_API_KEY', baseUrlVar: 'GOOGLE_GEMINI_BASE_URL', modelVar: 'GEMINI_MODEL' };
export const DEFAULT_MODEL = 'gemini-2.5-pro';
const DEFAULT_WAIT_MS = 8 * 3_600_000;

/**
 * A session's own HOME for Gemini CLI: made 0700 (an existing one of another user's, or one
 * others can reach, refuses the session) and removed when the session ends, since its
 * settings hold the session's MCP token (src/acp/agent-home.ts).
 */
export const geminiHome = (sessionId: string) => agentHomePath('gemini', sessionId);

const geminiCli = () => join(dirname(createRequire(import.meta.url).resolve('@google/gemini-cli/package.json')), 'bundle', 'gemini.js');

export const geminiSpec: AcpAgentSpec = {
  name: 'Gemini CLI',
  form: GEMINI_FORM,
  askTool: { dialect: cursorDialect, name: ASK_HUMAN },
  async launch(ctx, mcp) {
    const home = makeAgentHome('gemini', ctx.session.id, 'Gemini CLI');
    const tmp = join(home, 'tmp');
    mkdirSync(join(home, '.gemini'), { recursive: true, mode: 0o700 });
    mkdirSync(tmp, { recursive: true, mode: 0o700 });
    // It holds the MCP server's token: the session's only.
    writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(geminiSettings(mcp, ctx.waitMs ?? DEFAULT_WAIT_MS), null, 2), { mode: 0o600 });
    const env = ctx.env;
    return {
      command: process.execPath,
      args: [geminiCli(), '--acp'],
      env: {
        ...agentEnv(env),
        HOME: home,
        TMPDIR: tmp,
        GEMINI_MODEL: ctx.session.model || env[GEMINI_ENDPOINT.modelVar] || DEFAULT_MODEL,
        GEMINI_CLI_NO_RELAUNCH: 'true',
      },
      cwd: env.ASKRELAY_WORKDIR ?? process.cwd(),
    };
  },
  // askrelay's server is in the settings, with its timeout; none in session/new.
  mcpServers: () => [],
  // Gemini CLI cannot load its chat after a restart anyway (docs/providers/gemini.md): nothing
  // in the folder outlives the session, and its settings hold a token.
  ended: (ctx) => removeAgentHome('gemini', ctx.session.id),
  guidance: (ctx) => relayGuidance(GEMINI_ASK_TOOL, ctx.session.relayMode),
};

export const geminiRunner: ProviderRunner = {
  defaultModel: (env) => env[GEMINI_ENDPOINT.modelVar] || DEFAULT_MODEL,
  create(ctx) {
    if (!ctx.env[GEMINI_ENDPOINT.apiKeyVar]) return missingKeyRunner(GEMINI_ENDPOINT);
    // The ACP SDK loads with the first Gemini session that runs.
    return lazyRunner(async () => (await import('../../src/acp/acp-runner.js')).acpRunner(geminiSpec, ctx));
  },
};
