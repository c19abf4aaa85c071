import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { AnthropicServer } from '../../test/fakes/anthropic-server.js';
import type { OpenAIServer } from '../../test/fakes/openai-server.js';
import type { Card } from '../cards/model.js';
import { serveConfig } from '../config.js';
import type { Session } from '../sessions/model.js';
import type { RunningRelay } from '../start.js';
import { UsageError, parseFlags } from './flags.js';
import { optionsText } from './format.js';

export const DEMO_HELP = `askrelay demo — see askrelay work without any API key, offline

Usage: askrelay demo [--port N] [--data DIR] [--no-code]

Starts, all in this process:
  - a scripted model behind a local Anthropic Messages API (no internet, no key);
  - a relay on 127.0.0.1 (its page, API and token printed below);
  - one agent session per provider and engine, each asked to help pick a database:
    claude and deepseek on the messages engine, and on the code engine (Claude Code).
Each agent asks you "Which database?" as a card. Answer it on the page (or with
"askrelay answer"); the agent reads your answer in its provider's own format and ends
its turn. Ctrl+C stops everything.

  --port N     the relay's port (default 7070; 0 picks a free one)
  --data DIR   the relay's data folder (default: a fresh temporary folder, removed on
               exit, so the demo never touches your real cards and sessions)
  --no-code    skip the sessions that start an agent runtime (Claude Code, the Copilot
               runtime); they take a second or two to start`;

const PROMPT = 'Help me pick a database for a small web app.';

interface DemoSession {
  provider: string;
  engine: 'messages' | 'code' | 'sdk';
}

const MESSAGES_SESSIONS: DemoSession[] = [
  { provider: 'claude', engine: 'messages' },
  { provider: 'deepseek', engine: 'messages' },
];
const RUNTIME_SESSIONS: DemoSession[] = [
  { provider: 'claude', engine: 'code' },
  { provider: 'deepseek', engine: 'code' },
  { provider: 'copilot', engine: 'sdk' },
  { provider: 'openai', engine: 'sdk' },
];

/**
 * The environment the demo relay hands its providers: the user's own (PATH for Claude
 * Code) without anything that would send the agents elsewhere (their endpoints, keys,
 * Claude Code's Bedrock/Vertex switches, the relay's own settings), plus the scripted
 * endpoint for both providers, a scratch HOME and a scratch working folder.
 */
export function demoEnv(base: NodeJS.ProcessEnv, endpoint: string, chatEndpoint: string, home: string, workdir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) {
    if (value === undefined || /^(ASKRELAY_|ANTHROPIC_|DEEPSEEK_|CLAUDE_|OPENAI_|COPILOT_)/.test(key)) continue;
    env[key] = value;
  }
  return {
    ...env,
    ANTHROPIC_BASE_URL: endpoint,
    ANTHROPIC_API_KEY: 'demo',
    DEEPSEEK_BASE_URL: endpoint,
    DEEPSEEK_API_KEY: 'demo',
    OPENAI_BASE_URL: chatEndpoint,
    OPENAI_API_KEY: 'demo',
    OPENAI_MODEL: 'gpt-scripted',
    COPILOT_PROVIDER_BASE_URL: chatEndpoint,
    COPILOT_PROVIDER_API_KEY: 'demo',
    COPILOT_MODEL: 'gpt-scripted',
    HOME: home,
    ASKRELAY_WORKDIR: workdir,
    CLAUDE_CODE_TOTAL_TOKENS_REMINDER: 'off',
  };
}

export async function demoCommand(argv: string[]): Promise<number> {
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
  if (values.help) {
    console.log(DEMO_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}". Run "askrelay demo --help".`);

  const scratch = mkdtempSync(join(tmpdir(), 'askrelay-demo-'));
  const home = join(scratch, 'home');
  const workdir = join(scratch, 'work');
  mkdirSync(home);
  mkdirSync(workdir);
  const dataDir = values.data ? resolve(values.data) : join(scratch, 'data');

  let model: AnthropicServer | undefined;
  let chat: OpenAIServer | undefined;
  let running: RunningRelay | undefined;
  let unsubscribe = () => {};
  const closeAll = async () => {
    unsubscribe();
    // close() ends the sessions first: Claude Code writes into the scratch HOME until it exits.
    await running?.close().catch(() => {});
    await model?.close().catch(() => {});
    await chat?.close().catch(() => {});
    rmSync(scratch, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  };

  try {
    // Loaded here, so --help and flag mistakes answer at once. The design keeps the wire
    // fakes under test/; the demo plays the same scripted model the tests use.
    const { demoModel, startAnthropicServer } = await import('../../test/fakes/anthropic-server.js');
    const { demoChatModel, startOpenAIServer } = await import('../../test/fakes/openai-server.js');
    const { startRelay } = await import('../start.js');
    model = await startAnthropicServer({ model: demoModel });
    chat = await startOpenAIServer({ model: demoChatModel });
    const env = demoEnv(process.env, model.url, chat.url, home, workdir);
    const config = serveConfig({ port: values.port ?? '7070', data: dataDir }, env);
    try {
      running = await startRelay(config);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'EADDRINUSE') {
        throw new Error(`port ${config.port} is taken (is "askrelay serve" running?); pick another with --port N, or --port 0 for any free one.`);
      }
      throw err;
    }
    const relay = running;
    const plan = [...MESSAGES_SESSIONS, ...(values['no-code'] ? [] : RUNTIME_SESSIONS)];

    console.log('askrelay demo: a scripted model plays the agents; nothing leaves this machine, no key is needed.');
    console.log(`Scripted models: ${model.url} (Anthropic Messages, for claude and deepseek), ${chat.url} (Chat Completions, for copilot and openai)`);
    console.log(`Page: ${relay.url}`);
    console.log(`Token: ${relay.token}`);
    console.log(`Data: ${config.dataDir}${values.data ? '' : ' (fresh, removed when the demo stops)'}`);
    console.log('');
    console.log('Open the page, paste the token once and answer the cards. Or, from another terminal:');
    console.log(`  export ASKRELAY_URL=${relay.url} ASKRELAY_TOKEN=${relay.token}`);
    console.log('  askrelay cards                       # the open cards');
    console.log('  askrelay answer <card-id> sqlite     # answer one');
    console.log('  askrelay session list                # the sessions; "session show <id>" for a transcript');
    console.log('Press Ctrl+C to stop the demo.');
    console.log('');

    const names = new Map<string, string>();
    const width = Math.max(...plan.map((p) => `${p.provider}/${p.engine}`.length));
    const say = (sessionId: string, text: string) => console.log(`${(names.get(sessionId) ?? sessionId).padEnd(width)}  ${text}`);
    const lastStatus = new Map<string, string>();
    // A turn's last reply is read from the store (asynchronously): the lines still print in event order.
    let printing: Promise<void> = Promise.resolve();
    unsubscribe = relay.relay.events.subscribe((name, data) => {
      if (name === 'card.created') {
        const card = data as Card;
        if (card.sessionId && names.has(card.sessionId)) say(card.sessionId, cardLine(card));
      } else if (name === 'session.updated') {
        const session = data as Session;
        if (!names.has(session.id) || lastStatus.get(session.id) === session.status) return;
        lastStatus.set(session.id, session.status);
        printing = printing.then(async () => {
          if (session.status === 'idle') {
            const said = (await relay.sessions.get(session.id).catch(() => undefined))?.transcript?.filter((e) => e.role === 'assistant').at(-1)?.text;
            say(session.id, `turn ended${said ? `: ${said.replace(/\s+/g, ' ')}` : '.'}`);
            say(session.id, `  (send it another message with: askrelay session send ${session.id} "<text>")`);
          } else if (session.status === 'failed') {
            say(session.id, `failed: ${session.error ?? 'no reason given'}`);
          } else if (session.status === 'stopped') {
            say(session.id, 'stopped.');
          }
        });
      }
    });

    for (const { provider, engine } of plan) {
      try {
        const session = await relay.sessions.start({ provider, engine, prompt: PROMPT });
        names.set(session.id, `${provider}/${engine}`);
        say(session.id, `session ${session.id} started: "${PROMPT}"`);
      } catch (err) {
        console.log(`${`${provider}/${engine}`.padEnd(width)}  could not start: ${(err as Error).message}`);
      }
    }

    await new Promise<void>((done) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        console.log('\nStopping the demo…');
        done();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
  } finally {
    await closeAll();
  }
  return 0;
}

function cardLine(card: Card): string {
  const q = card.questions[0];
  const more = card.questions.length > 1 ? ` (+${card.questions.length - 1} more)` : '';
  return `asks ${q.header ? `${q.header}: ` : ''}${q.text}  ${optionsText(q)}${more}  — card ${card.id}`;
}
