import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { AnthropicServer } from '../../test/fakes/anthropic-server.js';
import type { OpenAIServer } from '../../test/fakes/openai-server.js';
import type { GeminiServer } from '../../test/fakes/gemini-server.js';
import type { Card } from '../cards/model.js';
import { serveConfig, type ServeConfig } from '../config.js';
import type { Session } from '../sessions/model.js';
import { orList } from '../sessions/providers.js';
import type { RunningRelay } from '../start.js';
import { UsageError, parseFlags } from './flags.js';
import { demoEnv, demoPlan, RESULT_WHY, WIRE_NAME, type DemoSession, type Wire } from './demo-plan.js';
import { optionsText } from './format.js';

export const DEMO_HELP = `askrelay demo — see askrelay work without any API key, offline

Usage: askrelay demo [--port N] [--data DIR] [--no-code]

Starts, all in this process:
  - three scripted models behind local model APIs (Anthropic Messages, OpenAI's Chat
    Completions and Responses, the Gemini API; no internet, no key);
  - a relay on 127.0.0.1 (its page, API and token printed below);
  - one agent session for each provider and engine those models can play, each asked
    to help pick a database (the list is printed as they start).
Each agent asks you "Which database?" as a card. Answer it on the page (or with
"askrelay answer"); the agent reads your answer in its provider's own format and ends
its turn. Ctrl+C stops everything.

  --port N     the relay's port (default 7070; 0 picks a free one)
  --data DIR   the relay's data folder (default: a fresh temporary folder, removed on
               exit, so the demo never touches your real cards and sessions)
  --no-code    skip the sessions that start an agent runtime (Claude Code, the Copilot
               runtime, Codex, Gemini CLI); they take a second or two to start`;

const PROMPT = 'Help me pick a database for a small web app.';

interface DemoFlags {
  port: string;
  data?: string;
  noCode: boolean;
}

function demoFlags(argv: string[]): DemoFlags | 'help' {
  const { values, positionals } = parseFlags('demo', () =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        port: { type: 'string' },
        data: { type: 'string' },
        'no-code': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }),
  );
  if (values.help) return 'help';
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}". Run "askrelay demo --help".`);
  return { port: values.port ?? '7070', ...(values.data ? { data: values.data } : {}), noCode: values['no-code'] ?? false };
}

/** What the demo started, each part once it runs: closeDemo() lets go of whatever is there. */
interface Demo {
  scratch: string;
  model?: AnthropicServer;
  chat?: OpenAIServer;
  gemini?: GeminiServer;
  relay?: RunningRelay;
  unsubscribe: () => void;
}

async function closeDemo(demo: Demo): Promise<void> {
  demo.unsubscribe();
  // close() ends the sessions first: Claude Code writes into the scratch HOME until it exits.
  await demo.relay?.close().catch(() => {});
  await demo.model?.close().catch(() => {});
  await demo.chat?.close().catch(() => {});
  await demo.gemini?.close().catch(() => {});
  rmSync(demo.scratch, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}

/** Where each wire's scripted model listens. */
const wireUrls = (demo: Demo): Record<Wire, string> => ({ messages: demo.model!.url, chat: demo.chat!.url, gemini: demo.gemini!.url });

/** The scripted models, then the relay wired to them. */
async function startDemo(demo: Demo, flags: DemoFlags): Promise<{ config: ServeConfig; plan: ReturnType<typeof demoPlan> }> {
  const home = join(demo.scratch, 'home');
  const workdir = join(demo.scratch, 'work');
  mkdirSync(home);
  mkdirSync(workdir);
  // Loaded here, so --help and flag mistakes answer at once. The design keeps the wire
  // fakes under test/; the demo plays the same scripted model the tests use.
  const { demoModel, startAnthropicServer } = await import('../../test/fakes/anthropic-server.js');
  const { demoChatModel, startOpenAIServer } = await import('../../test/fakes/openai-server.js');
  const { startGeminiServer } = await import('../../test/fakes/gemini-server.js');
  const { demoGeminiModel, demoResponsesModel } = await import('../../test/fakes/acp-demo.js');
  const { registry, startRelay } = await import('../start.js');
  demo.model = await startAnthropicServer({ model: demoModel });
  demo.chat = await startOpenAIServer({ model: demoChatModel, responses: demoResponsesModel });
  demo.gemini = await startGeminiServer({ model: demoGeminiModel });
  const providers = registry.describe({}, 0);
  const plan = demoPlan(providers, !flags.noCode);
  const env = demoEnv(process.env, providers, { wires: plan.wires, urls: wireUrls(demo) }, home, workdir);
  // The relay's log would interleave with the demo's own lines: warnings only, unless asked.
  const config = serveConfig({ port: flags.port, data: flags.data ? resolve(flags.data) : join(demo.scratch, 'data') }, { ...env, ASKRELAY_LOG: process.env.ASKRELAY_LOG?.trim() || 'warn' });
  try {
    demo.relay = await startRelay(config);
  } catch (err) {
    if ((err as { code?: string }).code === 'EADDRINUSE') {
      throw new Error(`port ${config.port} is taken (is "askrelay serve" running?); pick another with --port N, or --port 0 for any free one.`);
    }
    throw err;
  }
  return { config, plan };
}

function printIntro(relay: RunningRelay, urls: Record<Wire, string>, config: ServeConfig, flags: DemoFlags, wires: Map<string, Wire>): void {
  const models = (Object.keys(urls) as Wire[]).map((wire) => {
    const playing = [...wires].filter(([, w]) => w === wire).map(([id]) => id);
    return `${urls[wire]} (${WIRE_NAME[wire]}, for ${orList(playing, 'and')})`;
  });
  console.log('askrelay demo: a scripted model plays the agents; nothing leaves this machine, no key is needed.');
  console.log(`Scripted models: ${models.join(', ')}`);
  console.log(`Page: ${relay.url}`);
  console.log(`Token: ${relay.token}`);
  console.log(`Data: ${config.dataDir}${flags.data ? '' : ' (fresh, removed when the demo stops)'}`);
  console.log('');
  console.log('Open the page, paste the token once and answer the cards. Or, from another terminal:');
  console.log(`  export ASKRELAY_URL=${relay.url} ASKRELAY_TOKEN=${relay.token}`);
  console.log('  askrelay cards                       # the open cards');
  console.log('  askrelay answer <card-id> sqlite     # answer one');
  console.log('  askrelay session list                # the sessions; "session show <id>" for a transcript');
  console.log('Press Ctrl+C to stop the demo.');
  console.log('');
}

/** One line per session: printed as its cards open and its turns end. */
type Say = (sessionId: string, text: string) => void;

/** The demo's sessions: their names ("claude/code"), engines, and which have had an answer. */
interface Followed {
  names: Map<string, string>;
  engines: Map<string, string>;
  answered: Set<string>;
  /** How many sessions the demo set out to start. */
  planned: number;
}

/** Prints the demo sessions' cards and turns as they happen; returns the unsubscribe. */
function followSessions(relay: RunningRelay, followed: Followed, say: Say): () => void {
  const { names } = followed;
  const lastStatus = new Map<string, string>();
  // A turn's last reply is read from the store (asynchronously): the lines still print in event order.
  let printing: Promise<void> = Promise.resolve();
  return relay.relay.events.subscribe((name, data) => {
    if (name === 'card.created') {
      const card = data as Card;
      if (card.sessionId && names.has(card.sessionId)) say(card.sessionId, cardLine(card));
      return;
    }
    if (name !== 'session.updated') return;
    const session = data as Session;
    if (!names.has(session.id) || lastStatus.get(session.id) === session.status) return;
    lastStatus.set(session.id, session.status);
    printing = printing.then(() => sayStatus(relay, session, followed, say));
  });
}

async function sayStatus(relay: RunningRelay, session: Session, followed: Followed, say: Say): Promise<void> {
  if (session.status === 'idle') {
    const transcript = (await relay.sessions.get(session.id).catch(() => undefined))?.transcript ?? [];
    // What the card's answer became for the agent: the tool line that names the card.
    const received = transcript.filter((e) => e.role === 'tool' && e.cardId).at(-1)?.text;
    const said = transcript.filter((e) => e.role === 'assistant').at(-1)?.text;
    if (received !== undefined) {
      say(session.id, `received: ${received.replace(/\s+/g, ' ')}`);
      const engine = followed.engines.get(session.id) ?? '';
      const why = RESULT_WHY[`${session.provider}/${engine}`] ?? RESULT_WHY[engine];
      if (why) say(session.id, `  (${why})`);
    }
    say(session.id, `turn ended${said ? `: ${said.replace(/\s+/g, ' ')}` : '.'}`);
    if (received === undefined || followed.answered.has(session.id)) return;
    followed.answered.add(session.id);
    if (followed.answered.size === followed.planned) printAllAnswered(followed.planned, session.id);
  } else if (session.status === 'failed') {
    say(session.id, `failed: ${session.error ?? 'no reason given'}`);
  } else if (session.status === 'stopped') {
    say(session.id, 'stopped.');
  }
}

/** Every demo session has had its answer: what the demo showed, and what to try next. */
function printAllAnswered(count: number, sessionId: string): void {
  console.log('');
  console.log(`All ${count} answered. One answer, and each agent received it in its own provider's words (the "received" lines above).`);
  console.log('Try next:');
  console.log(`  askrelay session send ${sessionId} "Ask me again"   # a new turn: the agent asks again`);
  console.log(`  askrelay session show ${sessionId}                  # its whole transcript`);
  console.log('  askrelay tui                                          # answer cards in the terminal');
  console.log('  askrelay serve                                        # a relay of your own, for real agents (README.md)');
  console.log('Ctrl+C stops the demo.');
}

async function startSessions(relay: RunningRelay, sessions: readonly DemoSession[], followed: Followed, width: number, say: Say): Promise<void> {
  for (const { provider, engine, plan } of sessions) {
    try {
      const session = await relay.sessions.start({ provider, engine, prompt: PROMPT, ...(plan ? { plan } : {}) });
      followed.names.set(session.id, `${provider}/${engine}`);
      followed.engines.set(session.id, engine);
      say(session.id, `session ${session.id} started: "${PROMPT}"`);
    } catch (err) {
      followed.planned -= 1; // it can never be answered
      console.log(`${`${provider}/${engine}`.padEnd(width)}  could not start: ${(err as Error).message}`);
    }
  }
}

function untilInterrupted(): Promise<void> {
  return new Promise<void>((done) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      console.log('\nStopping the demo…');
      done();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export async function demoCommand(argv: string[]): Promise<number> {
  const flags = demoFlags(argv);
  if (flags === 'help') {
    console.log(DEMO_HELP);
    return 0;
  }
  const demo: Demo = { scratch: mkdtempSync(join(tmpdir(), 'askrelay-demo-')), unsubscribe: () => {} };
  try {
    const { config, plan } = await startDemo(demo, flags);
    const relay = demo.relay!;
    printIntro(relay, wireUrls(demo), config, flags, plan.wires);
    const followed: Followed = { names: new Map(), engines: new Map(), answered: new Set(), planned: plan.sessions.length };
    const width = Math.max(...plan.sessions.map((p) => `${p.provider}/${p.engine}`.length));
    const say: Say = (sessionId, text) => console.log(`${(followed.names.get(sessionId) ?? sessionId).padEnd(width)}  ${text}`);
    demo.unsubscribe = followSessions(relay, followed, say);
    await startSessions(relay, plan.sessions, followed, width, say);
    await untilInterrupted();
  } finally {
    await closeDemo(demo);
  }
  return 0;
}

function cardLine(card: Card): string {
  const q = card.questions[0];
  const more = card.questions.length > 1 ? ` (+${card.questions.length - 1} more)` : '';
  return `asks ${q.header ? `${q.header}: ` : ''}${q.text}  ${optionsText(q)}${more}  — card ${card.id}`;
}
