import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { AcpAgentSpec } from '../../src/acp/acp-runner.js';
import { agentHomePath, makeAgentHome } from '../../src/acp/agent-home.js';
import { agentEnv } from '../../src/sessions/agent-env.js';
import { relayGuidance } from '../../src/sessions/guidance.js';
import { lazyRunner, missingKeyRunner, type ProviderRunner, type RunnerContext } from '../../src/sessions/runner.js';
import { codexQuestions, questionContent, questionDraft } from './adapter.js';
import { cursorDialect } from '../cursor/index.js';
import { ASK_USER, CODEX_FORM, REQUEST_USER_INPUT } from './tool.js';

// Codex through the Agent Client Protocol: @agentclientprotocol/codex-acp drives `codex
// app-server` (its binary from npm) and askrelay is its ACP client (src/acp/acp-runner.ts).
// Each session gets a private CODEX_HOME whose config.toml points Codex at OPENAI_BASE_URL
// through a custom model provider on the Responses API, the key read from OPENAI_API_KEY.
// The session runs in Codex's workspace-write mode, where approvals come to the human (its
// default mode has a model review them instead); with `plan` it starts in Plan mode, where
// Codex asks with its own request_user_input. In every mode askrelay's MCP server is in the
// config (src/acp/ask-mcp-server.ts): ask_user and the relay tool, approved there so that a
// question is not first an approval card, with a call timeout as long as a card may wait.

export const CODEX_ENDPOINT = { name: 'Codex', apiKeyVar: 'OPENAI_API_KEY', baseUrlVar: 'OPENAI_BASE_URL', modelVar: 'CODEX_MODEL' };
export const DEFAULT_MODEL = 'gpt-5-codex';
export const DEFAULT_BASE_URL = 'https://api.openai.com/v1';
/** The mode whose approvals reach the human. */
export const APPROVAL_MODE = 'workspace-write';

/** The variable that carries askrelay's MCP server token to Codex (never written to a file). */
export const MCP_TOKEN_VAR = 'ASKRELAY_MCP_TOKEN';

/**
 * The config.toml of a session's CODEX_HOME: the endpoint as a custom provider, nothing phoning
 * home, and askrelay's MCP server (ask_user, the relay tool) with a call timeout as long as a
 * card may wait.
 */
export function codexConfig(baseUrl: string, model: string, mcp?: { url: string; timeoutSec: number }): string {
  return [
    `model = ${JSON.stringify(model)}`,
    'model_provider = "askrelay"',
    'check_for_update_on_startup = false',
    '[analytics]\nenabled = false',
    '[feedback]\nenabled = false',
    '[otel]\nexporter = "none"',
    '[model_providers.askrelay]',
    'name = "askrelay"',
    `base_url = ${JSON.stringify(baseUrl)}`,
    'wire_api = "responses"',
    `env_key = "${CODEX_ENDPOINT.apiKeyVar}"`,
    'supports_websockets = false',
    ...(mcp ? ['[mcp_servers.askrelay]', `url = ${JSON.stringify(mcp.url)}`, `bearer_token_env_var = "${MCP_TOKEN_VAR}"`, `tool_timeout_sec = ${mcp.timeoutSec}`, 'default_tools_approval_mode = "approve"'] : []),
    '',
  ].join('\n');
}

/** A session's own folder for Codex's home (its config, its threads: what session/load reads). */
export const codexHome = (sessionId: string) => agentHomePath('codex', sessionId);

const codexAcp = () => join(dirname(createRequire(import.meta.url).resolve('@agentclientprotocol/codex-acp/package.json')), 'dist', 'index.js');

export const codexSpec: AcpAgentSpec = {
  name: 'Codex',
  form: CODEX_FORM,
  askTool: { dialect: cursorDialect, name: ASK_USER },
  async launch(ctx: RunnerContext, mcp) {
    // Kept after the session: session/load reads Codex's threads after a restart.
    const home = makeAgentHome('codex', ctx.session.id, 'Codex');
    const timeoutSec = Math.ceil((ctx.waitMs ?? 8 * 3_600_000) / 1000) + 60;
    writeFileSync(join(home, 'config.toml'), codexConfig(ctx.env.OPENAI_BASE_URL || DEFAULT_BASE_URL, ctx.session.model || DEFAULT_MODEL, mcp && { url: mcp.url, timeoutSec }), { mode: 0o600 });
    return {
      command: process.execPath,
      args: [codexAcp()],
      // The agent's shell acts as the session (agentEnv); HOME too is the session's own.
      env: { ...agentEnv(ctx.env), HOME: home, CODEX_HOME: home, ...(mcp ? { [MCP_TOKEN_VAR]: mcp.token } : {}) },
      cwd: ctx.env.ASKRELAY_WORKDIR ?? process.cwd(),
    };
  },
  mcpServers: () => [],
  async configure(agent, session, ctx) {
    await agent.request('session/set_mode', { sessionId: session.sessionId, modeId: APPROVAL_MODE });
    if (ctx.session.plan) await agent.request('session/set_config_option', { sessionId: session.sessionId, configId: 'collaboration_mode', value: 'plan' } as never);
  },
  elicitation(request) {
    const questions = codexQuestions(request);
    return questions && { draft: questionDraft(questions), result: (card) => questionContent(questions, card) };
  },
  // Plan mode has Codex's own question tool; outside it, askrelay's (its MCP tools are grouped as mcp__askrelay).
  guidance: (ctx) => relayGuidance(ctx.session.plan ? REQUEST_USER_INPUT : `mcp__askrelay ${ASK_USER}`, ctx.session.relayMode),
};

export const codexRunner: ProviderRunner = {
  planMode: true,
  defaultModel: (env) => env[CODEX_ENDPOINT.modelVar] || DEFAULT_MODEL,
  create(ctx) {
    if (!ctx.env[CODEX_ENDPOINT.apiKeyVar]) return missingKeyRunner(CODEX_ENDPOINT);
    // The ACP SDK loads with the first Codex session that runs.
    return lazyRunner(async () => (await import('../../src/acp/acp-runner.js')).acpRunner(codexSpec, ctx));
  },
};
