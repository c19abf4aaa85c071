import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../src/cli/doctor/report.js';
import { serveConfig } from '../../src/config.js';
import { startRelay, type RunningRelay } from '../../src/start.js';
import { MIGRATIONS, migrate } from '../../src/store/postgres/migrations.js';
import { startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { discordApp, startFakeDiscord } from '../fakes/discord-api.js';
import { startMattermostApi, type MattermostFake } from '../fakes/mattermost-api.js';
import { startOpenAIServer, type OpenAIServer } from '../fakes/openai-server.js';
import { startGeminiServer, type GeminiServer } from '../fakes/gemini-server.js';
import { startFakeSlack, type FakeSlack } from '../fakes/slack-api.js';
import { startFakeTelegram, type FakeTelegram } from '../fakes/telegram-api.js';
import { runCli, type CliRun } from '../support/cli.js';
import { closedPort } from '../support/closed-port.js';
import { freshDatabase, testPool } from '../support/postgres.js';

// askrelay doctor, the real command against a real relay (SQLite, its own data folder), the
// wire fakes of the model APIs and chat platforms, a closed port, and a real PostgreSQL.
// Always one SQLite relay, also under ASKRELAY_TEST_NODES=2: what is checked is that
// relay's folder; the PostgreSQL store has its own cases below.

const TELEGRAM_TOKEN = '123456:telegram-right-token';
const TELEGRAM_CHAT = -1001;
const DISCORD_TOKEN = 'discord-bot-token-0123456789';
const API_KEY = 'sk-doctor-secret-key-0123456789';

let scratch: string;
let dataDir: string;
let relay: RunningRelay;
let anthropic: AnthropicServer;
let openai: OpenAIServer;
let telegram: FakeTelegram;
let slack: FakeSlack;
let discord: Awaited<ReturnType<typeof startFakeDiscord>>;
let mattermost: MattermostFake;
let gemini: GeminiServer;
/** Every output of the command in this file, checked at the end for secrets. */
const outputs: string[] = [];

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'askrelay-doctor-'));
  dataDir = join(scratch, 'data');
  // No ASKRELAY_TOKEN: the relay makes <data>/token, which the doctor then reads and checks.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ASKRELAY_')));
  relay = await startRelay(serveConfig({ port: '0', data: dataDir }, { ...env, ASKRELAY_LOG: 'warn' }));
  token = readFileSync(join(dataDir, 'token'), 'utf8').trim();
  gemini = await startGeminiServer({ model: () => ({ text: 'unused' }) });
  [anthropic, openai, telegram, slack, discord, mattermost] = await Promise.all([
    startAnthropicServer({ model: () => ({ text: 'unused' }) }),
    startOpenAIServer({ model: () => ({ text: 'unused' }) }),
    startFakeTelegram({ token: TELEGRAM_TOKEN, chat: TELEGRAM_CHAT }),
    startFakeSlack(),
    startFakeDiscord({ token: DISCORD_TOKEN }),
    startMattermostApi(),
  ]);
});

afterAll(async () => {
  await Promise.all([relay?.close(), gemini?.close(), anthropic?.close(), openai?.close(), telegram?.close(), slack?.close(), discord?.close(), mattermost?.close()]);
  rmSync(scratch, { recursive: true, force: true });
  // Outside the tests: a secret printed by any run fails the file.
  const secrets = [token, API_KEY, TELEGRAM_TOKEN, DISCORD_TOKEN, 'xoxb-1234-5678-fake', 'mm-bot-token', 'wrong-token-0123456789abcdef', '999:wrong-telegram-token', 'sekret-pass'];
  for (const out of outputs) for (const secret of secrets) expect(out).not.toContain(secret);
});

/** The relay token the relay made in its folder. */
let token = '';

/** Every provider pointed at a fake that answers, with a key; every chat channel at its fake with its token. */
const wellSetUp = (): Record<string, string> => ({
  ASKRELAY_URL: relay.url,
  ASKRELAY_DATA: dataDir,
  ANTHROPIC_BASE_URL: anthropic.url,
  ANTHROPIC_API_KEY: API_KEY,
  DEEPSEEK_BASE_URL: `${anthropic.url}/anthropic`,
  DEEPSEEK_API_KEY: API_KEY,
  COPILOT_PROVIDER_BASE_URL: openai.url,
  COPILOT_PROVIDER_API_KEY: API_KEY,
  OPENAI_BASE_URL: openai.url,
  OPENAI_API_KEY: API_KEY,
  XAI_BASE_URL: openai.url,
  XAI_API_KEY: API_KEY,
  GOOGLE_GEMINI_BASE_URL: gemini.url,
  GEMINI_API_KEY: API_KEY,
  ASKRELAY_TELEGRAM_TOKEN: TELEGRAM_TOKEN,
  ASKRELAY_TELEGRAM_CHAT: String(TELEGRAM_CHAT),
  ASKRELAY_TELEGRAM_ANSWERERS: '42',
  ASKRELAY_TELEGRAM_API_ROOT: telegram.url,
  ASKRELAY_SLACK_TOKEN: slack.token,
  ASKRELAY_SLACK_CHANNEL: slack.channelId,
  ASKRELAY_SLACK_ANSWERERS: 'U1',
  ASKRELAY_SLACK_SIGNING_SECRET: 'slack-signing-secret',
  ASKRELAY_SLACK_API_URL: slack.url,
  ASKRELAY_DISCORD_TOKEN: DISCORD_TOKEN,
  ASKRELAY_DISCORD_CHANNEL: discord.channel,
  ASKRELAY_DISCORD_ANSWERERS: '*',
  ASKRELAY_DISCORD_PUBLIC_KEY: discordApp().publicKey,
  ASKRELAY_DISCORD_API_URL: discord.url,
  ASKRELAY_MATTERMOST_TOKEN: mattermost.token,
  ASKRELAY_MATTERMOST_URL: mattermost.url,
  ASKRELAY_MATTERMOST_CHANNEL: mattermost.channelId,
  ASKRELAY_MATTERMOST_ANSWERERS: '*',
});

async function doctor(env: Record<string, string | undefined>, ...args: string[]): Promise<CliRun> {
  const run = await runCli(['doctor', '--timeout', '2s', ...args], env, scratch);
  outputs.push(run.stdout, run.stderr);
  return run;
}

/** The report's lines as [mark, name, sentence], without the summary. */
const lines = (stdout: string) =>
  stdout
    .split('\n\n')[0]
    .split('\n')
    .map((line) => /^(ok|info|warn|FAIL)\s+(\S+(?: \S+)?)\s{2,}(.*)$/.exec(line)?.slice(1) ?? ['?', '?', line]);
const line = (stdout: string, name: string) => lines(stdout).filter(([, n]) => n === name);

/** Whether this machine has the space the disk check calls plenty (it warns under 1 GB). */
const plentyOfDisk = () => {
  const s = statfsSync(dataDir);
  return Number(s.bavail) * Number(s.bsize) >= 1024 ** 3;
};

describe('askrelay doctor against a relay', () => {
  it('a well set-up relay: every line ok, exit 0', async () => {
    writeFileSync(join(scratch, 'routes.json'), JSON.stringify([{ name: 'all', to: ['everyone'] }]), { mode: 0o600 });
    const run = await doctor({ ...wellSetUp(), ASKRELAY_ROUTES: join(scratch, 'routes.json') });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const all = lines(run.stdout);
    expect(all.map(([, name]) => name)).toEqual([
      'settings', 'relay', 'relay token', 'data folder', 'folder lock', 'token file', 'audit key', 'routes', 'store', 'push keys', 'free disk',
      'claude', 'deepseek', 'copilot', 'openai', 'grok', 'codex', 'gemini', 'telegram', 'slack', 'discord', 'mattermost',
    ]);
    for (const [mark, name, sentence] of all) {
      if (name === 'free disk' && !plentyOfDisk()) continue;
      expect(`${mark} ${name}: ${sentence}`).toMatch(/^ok /);
    }
    expect(line(run.stdout, 'relay')[0][2]).toContain(`The relay at ${relay.url} answers: askrelay`);
    expect(line(run.stdout, 'relay token')[0][2]).toBe(`The relay accepts the token from ${join(dataDir, 'token')}.`);
    // The relay this test runs holds its folder; the probe takes nothing from it.
    expect(line(run.stdout, 'folder lock')[0][2]).toMatch(new RegExp(`^Held by the askrelay started \\S+ \\(pid ${process.pid} on \\S+\\): a second relay there is refused\\.$`));
    expect(line(run.stdout, 'routes')[0][2]).toBe(`1 rule in ASKRELAY_ROUTES (${join(scratch, 'routes.json')}).`);
    expect(line(run.stdout, 'store')[0][2]).toMatch(/askrelay\.sqlite passes PRAGMA quick_check and has all \d+ tables/);
    expect(line(run.stdout, 'telegram')[0][2]).toBe('Telegram accepts the token (getMe): bot @askrelay_bot.');
    expect(line(run.stdout, 'slack')[0][2]).toBe('Slack accepts the token (auth.test): askrelay in askrelay test.');
    expect(line(run.stdout, 'claude')[0][2]).toMatch(/^ANTHROPIC_BASE_URL http:\/\/127\.0\.0\.1:\d+\/ answers \(HTTP \d+ to GET .*\/v1\/models\); ANTHROPIC_API_KEY is set\.$/);
    expect(run.stdout.trim().split('\n').at(-1)).toMatch(/^All well: \d+ checks passed\.$|^No problems; 1 warning worth a look\.$/);
    // The harmless calls really reached the platforms; no key went to a model API.
    expect(telegram.requests.map((r) => r.method)).toContain('getMe');
    expect(anthropic.requests.some((r) => JSON.stringify(r.headers).includes(API_KEY))).toBe(false);
  });

  it('a broken set-up: each problem named in its own line, exit 1', async () => {
    const env = {
      ...wellSetUp(),
      ASKRELAY_TOKEN: 'wrong-token-0123456789abcdef',
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${await closedPort()}`,
      DEEPSEEK_API_KEY: undefined,
      ASKRELAY_TELEGRAM_TOKEN: '999:wrong-telegram-token',
    };
    const run = await doctor(env);
    expect(run.code).toBe(1);
    expect(line(run.stdout, 'relay token')).toEqual([['FAIL', 'relay token', `The relay at ${relay.url} refused the token from ASKRELAY_TOKEN; use the token "askrelay serve" printed (kept in its data folder's token file).`]]);
    expect(line(run.stdout, 'deepseek')).toEqual([['FAIL', 'deepseek', 'DEEPSEEK_BASE_URL is set but DEEPSEEK_API_KEY is not: DeepSeek sessions would have no key. Set DEEPSEEK_API_KEY, or unset DEEPSEEK_BASE_URL.']]);
    const [claude] = line(run.stdout, 'claude');
    expect(claude[0]).toBe('FAIL');
    expect(claude[2]).toMatch(new RegExp(`^ANTHROPIC_BASE_URL ${env.ANTHROPIC_BASE_URL}/ does not answer \\(connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+\\); check the address or unset it\\.$`));
    expect(line(run.stdout, 'telegram')).toEqual([
      ['FAIL', 'telegram', 'Telegram refused the token (401 Unauthorized) on getMe: check ASKRELAY_TELEGRAM_TOKEN (or telegram.token in the channels file); it is the token @BotFather gave the bot, like 123456789:AA….'],
    ]);
    // What is not broken is still said to be fine, and the summary counts the four.
    for (const name of ['relay', 'store', 'slack', 'openai']) expect(line(run.stdout, name)[0][0]).toBe('ok');
    expect(run.stdout).toMatch(/\n4 problems to fix \(FAIL\)/);
    // The fake saw the wrong token's getMe refused with Telegram's own answer.
    const refused = await fetch(`${telegram.url}/bot999:wrong-telegram-token/getMe`);
    expect([refused.status, await refused.json()]).toEqual([401, { ok: false, error_code: 401, description: 'Unauthorized' }]);
  });

  it('a token file of mode 0644 is named: a warning while the folder is 0700, a FAIL once others can enter the folder', async () => {
    const file = join(dataDir, 'token');
    try {
      chmodSync(file, 0o644);
      const closed = await doctor(wellSetUp());
      expect(closed.code).toBe(0);
      const [warn] = line(closed.stdout, 'token file');
      expect(warn.slice(0, 2)).toEqual(['warn', 'token file']);
      expect(warn[2]).toContain(`${file} is mode 0644, wider than 0600`);
      expect(warn[2]).toContain(`run "chmod 600 ${file}"`);

      chmodSync(dataDir, 0o711);
      const open = await doctor(wellSetUp());
      expect(open.code).toBe(1);
      expect(line(open.stdout, 'token file')[0]).toEqual(['FAIL', 'token file', `${file} is mode 0644: users other than its owner can read the relay token; run "chmod 600 ${file}" (and change that secret if they may have read it).`]);
      expect(line(open.stdout, 'data folder')[0][0]).toBe('warn');
      expect(line(open.stdout, 'data folder')[0][2]).toContain('is mode 0711: other users can look inside');
    } finally {
      chmodSync(file, 0o600);
      chmodSync(dataDir, 0o700);
    }
  });

  it('--json prints the same results as a JSON array', async () => {
    const run = await doctor({ ...wellSetUp(), ASKRELAY_TOKEN: 'wrong-token-0123456789abcdef' }, '--json');
    expect(run.code).toBe(1);
    const results = JSON.parse(run.stdout) as CheckResult[];
    expect(Array.isArray(results)).toBe(true);
    for (const r of results) {
      expect(Object.keys(r)).toEqual(['id', 'name', 'status', 'message']);
      expect(['ok', 'info', 'warn', 'fail']).toContain(r.status);
    }
    expect(results.map((r) => r.id)).toEqual(expect.arrayContaining(['settings', 'relay', 'token', 'store', 'push-keys', 'provider:claude', 'channel:telegram']));
    expect(results.find((r) => r.id === 'token')).toMatchObject({ status: 'fail', message: expect.stringContaining('refused the token from ASKRELAY_TOKEN') });
  });
});

describe('askrelay doctor without a running relay', () => {
  it('no relay, a damaged database, a cut VAPID file, a bad setting: named, exit 1; nothing is written to the folder', async () => {
    const broken = join(scratch, 'broken');
    mkdirSync(broken, { mode: 0o700 });
    writeFileSync(join(broken, 'askrelay.sqlite'), 'this is not a database, just some text long enough to be read', { mode: 0o600 });
    writeFileSync(join(broken, 'vapid.json'), '{"publicKey": "BA', { mode: 0o600 });
    writeFileSync(join(broken, 'token'), 'short\n', { mode: 0o600 });
    writeFileSync(join(broken, 'routes.json'), JSON.stringify([{ name: 'pay', to: [] }]), { mode: 0o600 });
    const url = `http://127.0.0.1:${await closedPort()}`;
    const run = await doctor({ ASKRELAY_URL: url, ASKRELAY_WAIT: 'soon' }, '--data', broken);
    expect(run.code).toBe(1);
    expect(line(run.stdout, 'settings')).toEqual([['FAIL', 'settings', 'ASKRELAY_WAIT: "soon" is not a duration; write it like 8h, 90m, 2s, 500ms or 1h30m. "askrelay serve" refuses to start with it.']]);
    expect(line(run.stdout, 'relay')[0]).toEqual(['FAIL', 'relay', expect.stringMatching(new RegExp(`^Cannot reach the relay at ${url}/ \\(connect ECONNREFUSED .*\\); is "askrelay serve" running there\\?`))]);
    expect(line(run.stdout, 'relay token')[0]).toEqual(['info', 'relay token', 'Not checked: the relay did not answer.']);
    expect(line(run.stdout, 'folder lock')[0]).toEqual(['info', 'folder lock', `No relay holds ${broken} now: "askrelay serve" may start there.`]);
    expect(line(run.stdout, 'token file')[0]).toEqual(['FAIL', 'token file', expect.stringContaining(`The token in ${join(broken, 'token')} is 5 characters long`)]);
    expect(line(run.stdout, 'store')[0]).toEqual(['FAIL', 'store', expect.stringContaining(`The database ${join(broken, 'askrelay.sqlite')} is damaged or is not an SQLite database`)]);
    expect(line(run.stdout, 'push keys')[0]).toEqual(['FAIL', 'push keys', expect.stringContaining(`${join(broken, 'vapid.json')} does not hold a VAPID key pair`)]);
    expect(readFileSync(join(broken, 'askrelay.sqlite'), 'utf8')).toBe('this is not a database, just some text long enough to be read');
    expect(line(run.stdout, 'routes')[0]).toEqual(['FAIL', 'routes', `${join(broken, 'routes.json')}: rule 1 (pay): to: name at least one target. "askrelay serve" refuses to start with it; see docs/routing.md.`]);
    expect(readdirSync(broken).sort()).toEqual(['askrelay.sqlite', 'routes.json', 'token', 'vapid.json']);
  });
});

describe('askrelay doctor on PostgreSQL', () => {
  it('a migrated database is ok; one a migration short warns; an unknown one warns; an unreachable one FAILs without showing its password', async () => {
    const db = await freshDatabase();
    const pool = testPool(db.url);
    try {
      await migrate(pool);
      const env = { ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: token, ASKRELAY_DATA: join(scratch, 'pg-node') };
      const whole = await doctor(env, '--database', db.url);
      expect(line(whole.stdout, 'store')[0]).toEqual(['ok', 'store', expect.stringMatching(new RegExp(`answers; its schema has all ${MIGRATIONS.length} migrations of this askrelay\\.$`))]);
      expect(line(whole.stdout, 'push keys')[0]).toEqual(['info', 'push keys', 'Kept in the database, where there are none yet: the first node to start makes the pair.']);
      expect(line(whole.stdout, 'data folder')[0][0]).toBe('info');
      // The relay it found keeps its store in SQLite: said, as a warning.
      expect(line(whole.stdout, 'relay')[0]).toEqual(['warn', 'relay', expect.stringContaining('store sqlite, node')]);

      const last = MIGRATIONS.at(-1)!;
      await pool.query('DELETE FROM schema_migrations WHERE version = $1', [last.version]);
      await pool.query("INSERT INTO schema_migrations (version, name) VALUES (999, 'from the future')");
      const newer = await doctor(env, '--database', db.url);
      expect(line(newer.stdout, 'store')[0]).toEqual(['warn', 'store', expect.stringContaining('has migrations this askrelay does not know (999 from the future)')]);
      await pool.query('DELETE FROM schema_migrations WHERE version = 999');
      const short = await doctor(env, '--database', db.url);
      expect(line(short.stdout, 'store')[0]).toEqual(['warn', 'store', expect.stringContaining(`lacks migrations ${last.version} (${last.name})`)]);

      const away = `postgres://doctor:sekret-pass@127.0.0.1:${await closedPort()}/askrelay`;
      const down = await doctor(env, '--database', away);
      expect(down.code).toBe(1);
      expect(line(down.stdout, 'store')[0]).toEqual(['FAIL', 'store', expect.stringMatching(/^The database postgres:\/\/doctor:\*\*\*@127\.0\.0\.1:\d+\/askrelay does not answer \(.*ECONNREFUSED.*\)/)]);
      expect(line(down.stdout, 'push keys')[0][0]).toBe('info');
    } finally {
      await pool.end();
      await db.drop();
    }
  });
});
