import * as acp from '@agentclientprotocol/sdk';
import { createHash } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import type { Card, CardDraft } from '../cards/model.js';
import { formCardDraft, formResult, type ElicitationRequest, type FormAsker } from '../cards/elicitation-form.js';
import type { Runner, RunnerContext } from '../sessions/runner.js';
import { VERSION } from '../version.js';
import { allowOnce, permissionDraft, permissionOutcome } from './permission.js';
import { readUpdate, type ToolTitles } from './updates.js';
import { startAskMcpServer, type AskMcpServer, type AskTool } from './ask-mcp-server.js';
import { restartPrompt, type PendingAsk } from './restart.js';
import { AgentProcess, type AcpLaunch } from './agent-process.js';

// One runner for every agent that speaks the Agent Client Protocol (Codex through codex-acp,
// Gemini CLI with --acp): the agent runs as a subprocess over stdio, askrelay is its client.
// Each turn is a session/prompt; while it runs, the agent's session/request_permission becomes
// an approval card and its elicitation/create (form mode) a question card, each answered in
// ACP's own words; its session/update notifications make the transcript (also those that
// arrive after the prompt's response). Anything else the agent asks is answered with
// JSON-RPC's "method not found", said once in the transcript, never left hanging.

export type { AcpLaunch } from './agent-process.js';

/** What makes one agent of the protocol a provider: how it starts and what it is called. */
export interface AcpAgentSpec {
  /** As the cards and messages name it: "Codex", "Gemini CLI". */
  name: string;
  /** The tool its form elicitations stand for, and who asks (src/cards/elicitation-form.ts). */
  form: FormAsker;
  /**
   * The process to start (its own home, the endpoint variables), made before the first turn;
   * `mcp`: askrelay's MCP server for this session, when the spec has an askTool, for the
   * agent's settings.
   */
  launch(ctx: RunnerContext, mcp: AskMcpServer | undefined): Promise<AcpLaunch>;
  /** An agent without a question tool of its own asks through this one, served over MCP. */
  askTool?: AskTool;
  /** MCP servers for session/new and session/load: askrelay's own (src/acp/relay-mcp.ts). */
  mcpServers(ctx: RunnerContext, capabilities: acp.AgentCapabilities | undefined): acp.McpServer[];
  /** After session/new (a new session only): modes, config options. */
  configure?(agent: acp.ClientContext, session: acp.NewSessionResponse, ctx: RunnerContext): Promise<void>;
  /** An agent's own reading of a form it sends (Codex's request_user_input); undefined: the generic form card. */
  elicitation?(request: ElicitationRequest): { draft: CardDraft; result(card: Card): acp.CreateElicitationResponse } | undefined;
  /** Prepended to the first prompt: what the agent is told about asking (relayGuidance). */
  guidance?(ctx: RunnerContext): string;
  /** After the agent stopped (the session stopped or failed, or the relay shuts down): what of its own to remove. */
  ended?(ctx: RunnerContext): void;
}

/** Saved with the session: the agent's session id, and a card open when the relay stopped. */
interface AcpState {
  acpSessionId?: string;
  pending?: PendingAsk;
}

/** Chunks of the agent's reply that arrive after its turn ended are joined for this long. */
const LATE_TEXT_MS = 200;

export function acpRunner(spec: AcpAgentSpec, ctx: RunnerContext): Runner {
  return new AcpRunner(spec, ctx);
}

class AcpRunner implements Runner {
  private process?: AgentProcess;
  private connection?: acp.ClientConnection;
  private capabilities?: acp.AgentCapabilities;
  private readonly state: AcpState;
  private text = '';
  private textTimer?: NodeJS.Timeout;
  private readonly titles: ToolTitles = new Map();
  private readonly refused = new Set<string>();
  /** Set while session/load replays the conversation: none of it is new. */
  private replaying = false;
  private mcp?: AskMcpServer;

  constructor(
    private readonly spec: AcpAgentSpec,
    private readonly ctx: RunnerContext,
  ) {
    this.state = ctx.loadState<AcpState>() ?? {};
  }

  async start(prompt: string, resumed: boolean): Promise<void> {
    const agent = await this.connect();
    if (resumed && this.state.acpSessionId) return this.resume(agent, this.state.acpSessionId);
    await this.newSession(agent);
    const guidance = this.spec.guidance?.(this.ctx);
    return this.turn(guidance ? `${guidance}\n\n${prompt}` : prompt);
  }

  async send(text: string): Promise<void> {
    if (!this.connection) {
      const agent = await this.connect();
      if (!this.state.acpSessionId) throw new Error(`${this.spec.name} has no session to continue.`);
      await this.load(agent, this.state.acpSessionId);
    }
    return this.turn(text);
  }

  async stop(): Promise<void> {
    const sessionId = this.state.acpSessionId;
    if (this.connection && sessionId) await this.connection.agent.notify(acp.methods.agent.session.cancel, { sessionId }).catch(() => {});
    this.flushText();
    this.connection?.close();
    this.connection = undefined;
    await this.process?.stop();
    await this.mcp?.close();
    this.mcp = undefined;
    this.spec.ended?.(this.ctx);
  }

  private async connect(): Promise<acp.ClientContext> {
    const { askTool } = this.spec;
    if (askTool && !this.mcp) {
      this.mcp = await startAskMcpServer(this.ctx, askTool, async (draft) => {
        const card = await this.ask({ kind: 'tool', draft, tool: askTool.name });
        if (card.status !== 'pending') this.said(card, resultText(askTool.dialect.toToolResult(card)));
        return card;
      });
    }
    this.process = await AgentProcess.start(this.spec.name, await this.spec.launch(this.ctx, this.mcp));
    const { child } = this.process;
    const app = acp
      .client()
      .onRequest(acp.methods.client.session.requestPermission, ({ params }) => this.permission(params))
      .onRequest(acp.methods.client.elicitation.create, ({ params }) => this.elicit(params))
      .onNotification(acp.methods.client.session.update, ({ params }) => this.update(params.update))
      .onRequest('*', ({ method }) => this.refuse(method))
      .onNotification('*', () => {});
    this.connection = app.connect(acp.ndJsonStream(Writable.toWeb(child.stdin!), Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>));
    const agent = this.connection.agent;
    const init = await this.call(
      agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        // Without elicitation.form an agent (Codex) answers its own questions with nothing.
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, elicitation: { form: {} } },
        clientInfo: { name: 'askrelay', version: VERSION },
      }),
      'initialize',
    );
    this.capabilities = init.agentCapabilities;
    return agent;
  }

  private async newSession(agent: acp.ClientContext): Promise<void> {
    const cwd = this.ctx.env.ASKRELAY_WORKDIR ?? process.cwd();
    const session = await this.call(agent.request(acp.methods.agent.session.new, { cwd, mcpServers: this.spec.mcpServers(this.ctx, this.capabilities) }), 'session/new');
    this.state.acpSessionId = session.sessionId;
    this.ctx.saveState(this.state);
    await this.spec.configure?.(agent, session, this.ctx);
  }

  private async load(agent: acp.ClientContext, sessionId: string): Promise<void> {
    if (!this.capabilities?.loadSession) {
      throw new Error(`${this.spec.name} cannot pick its session up again after a restart (it does not offer session/load); start a new session.`);
    }
    const cwd = this.ctx.env.ASKRELAY_WORKDIR ?? process.cwd();
    this.replaying = true;
    try {
      await this.call(agent.request(acp.methods.agent.session.load, { sessionId, cwd, mcpServers: this.spec.mcpServers(this.ctx, this.capabilities) }), 'session/load');
    } catch (err) {
      if (this.ctx.signal.aborted) throw err;
      throw new Error(`${this.spec.name} could not pick its session up again after a restart (${(err as Error).message}); start a new session.`);
    } finally {
      this.replaying = false;
      this.text = '';
    }
  }

  /** After a restart: the card that was open is waited for, then its answer goes to the agent in a prompt. */
  private async resume(agent: acp.ClientContext, sessionId: string): Promise<void> {
    await this.load(agent, sessionId);
    const pending = this.state.pending;
    if (!pending) return;
    const card = await this.ctx.ask(pending.draft);
    if (this.ctx.signal.aborted) return;
    this.clearPending();
    const ask = this.spec.askTool;
    return this.turn(restartPrompt(pending, card, ask && ((closed) => resultText(ask.dialect.toToolResult(closed)))));
  }

  private async turn(text: string): Promise<void> {
    const sessionId = this.state.acpSessionId!;
    this.ctx.heartbeat();
    const response = await this.call(this.connection!.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] }), 'session/prompt');
    this.flushText();
    if (this.ctx.signal.aborted) return;
    if (response.stopReason === 'refusal') this.ctx.log('system', `${this.spec.name} refused to go on.`);
    else if (response.stopReason === 'max_tokens' || response.stopReason === 'max_turn_requests') this.ctx.log('system', `${this.spec.name} stopped: ${response.stopReason.replace(/_/g, ' ')}.`);
  }

  private async permission(request: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse> {
    if (this.ctx.env.ASKRELAY_APPROVE_TOOLS === '1') return allowOnce(request);
    const draft = { ...permissionDraft(request, this.spec.name), toolCallId: `permission:${request.toolCall.toolCallId}` };
    const card = await this.ask({ kind: 'permission', draft, request });
    const outcome = permissionOutcome(request, card);
    const chosen = outcome.outcome.outcome === 'selected' ? request.options.find((o) => o.optionId === (outcome.outcome as { optionId: string }).optionId)?.name : undefined;
    this.said(card, chosen ? `Selected "${chosen}".` : 'Cancelled.');
    return outcome;
  }

  private async elicit(request: acp.CreateElicitationRequest): Promise<acp.CreateElicitationResponse> {
    // URL elicitations are not advertised; an agent that sends one anyway is declined.
    if (request.mode !== 'form') return { action: 'decline' };
    const form = request as ElicitationRequest & { toolCallId?: string | null };
    const own = this.spec.elicitation?.(form);
    const draft = { ...(own?.draft ?? formCardDraft(form, this.spec.form)), toolCallId: `elicitation:${form.toolCallId ?? hashOf(JSON.stringify(form.requestedSchema ?? {}) + form.message)}` };
    const card = await this.ask({ kind: 'elicitation', draft, request: form });
    const result = own ? own.result(card) : formResult(form, card);
    this.said(card, JSON.stringify(result));
    return result;
  }

  /** Opens the card, remembered until it closes so that a restart finds it. */
  private async ask(pending: PendingAsk): Promise<Card> {
    this.flushText();
    this.state.pending = pending;
    this.ctx.saveState(this.state);
    const card = await this.ctx.ask(pending.draft);
    // Stopped with the card open: it stays remembered for the restart.
    if (!(this.ctx.signal.aborted && card.status === 'pending')) this.clearPending();
    this.ctx.heartbeat();
    return card;
  }

  /** What the agent was handed for a card, in the transcript beside it (not after a stop: the agent is gone). */
  private said(card: Card, text: string): void {
    if (card.status !== 'pending') this.ctx.log('tool', text, card.id);
  }

  private clearPending(): void {
    delete this.state.pending;
    this.ctx.saveState(this.state);
  }

  private update(update: acp.SessionUpdate): void {
    this.ctx.heartbeat();
    if (this.replaying) return;
    const effect = readUpdate(update, this.titles);
    if (!effect) return;
    if (effect.kind === 'text') {
      this.text += effect.text;
      clearTimeout(this.textTimer);
      this.textTimer = setTimeout(() => this.flushText(), LATE_TEXT_MS);
      return;
    }
    this.flushText();
    this.ctx.log(effect.role, effect.text);
  }

  private flushText(): void {
    clearTimeout(this.textTimer);
    const text = this.text.trim();
    this.text = '';
    if (text) this.ctx.log('assistant', text);
  }

  private refuse(method: string): never {
    if (!this.refused.has(method)) {
      this.refused.add(method);
      this.ctx.log('system', `${this.spec.name} asked for "${method}", which askrelay does not offer; it was told so.`);
    }
    throw acp.RequestError.methodNotFound(method);
  }

  /** A request to the agent; its failure says what the agent's process said last. */
  private async call<T>(request: Promise<T>, what: string): Promise<T> {
    try {
      return await request;
    } catch (err) {
      if (this.ctx.signal.aborted) throw err;
      const detail = this.process?.detail() ?? '';
      const data = (err as { data?: unknown }).data;
      const why = typeof data === 'string' ? data : data && typeof data === 'object' && 'details' in data ? String((data as { details: unknown }).details) : '';
      throw new Error(`${this.spec.name} failed at ${what}: ${(err as Error).message}${why ? `: ${why}` : ''}${detail ? ` (${detail})` : ''}`);
    }
  }
}

/** The text parts of an MCP tool result. */
function resultText(result: unknown): string {
  const content = (result as { content?: { type?: string; text?: string }[] } | undefined)?.content ?? [];
  return content.flatMap((part) => (part.type === 'text' && part.text ? [part.text] : [])).join('\n');
}

const hashOf = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);
