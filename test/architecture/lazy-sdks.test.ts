import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// A relay at rest holds no provider SDK: each loads with the first session that runs on it
// (lazyRunner in src/sessions/runner.ts). Checked in a fresh Node process that imports the
// composition root with a resolve hook noting every SDK it is asked for.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// The provider SDKs, the PostgreSQL client (loaded only with ASKRELAY_DATABASE_URL) and the
// chat platforms' client libraries (loaded only for a channel switched on) web-push (to send) and the MCP SDK (with the first MCP session).
const SDKS = ['@anthropic-ai/sdk', '@anthropic-ai/claude-agent-sdk', '@github/copilot-sdk', 'openai', 'pg', 'grammy', '@slack/web-api', '@discordjs/rest', 'markdown-it', 'web-push', '@modelcontextprotocol/sdk', '@agentclientprotocol/sdk'];

const HOOK = `export async function resolve(specifier, context, next) {
  if (${JSON.stringify(SDKS)}.some((p) => specifier === p || specifier.startsWith(p + '/'))) process.stdout.write('SDK ' + specifier + '\\n');
  return next(specifier, context);
}`;

function importsIn(script: string): Promise<string> {
  const code = `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}));
${script}`;
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    ),
  );
}

describe('provider SDKs, the PostgreSQL client and the chat platforms\' libraries load on first use', () => {
  it('the composition root and the provider registry import none', { timeout: 90_000 }, async () => {
    const out = await importsIn(`await import('./src/start.ts'); await import('./providers/index.ts'); console.log('imported');`);
    expect(out).toBe('imported\n');
  });

  it('a session that runs loads the SDK of its engine, and only that one', { timeout: 90_000 }, async () => {
    const out = await importsIn(`const { grokRunner } = await import('./providers/grok/runner.ts');
const runner = grokRunner.create({ env: { XAI_API_KEY: 'x', XAI_BASE_URL: 'http://127.0.0.1:9/v1' }, session: { model: '', relayMode: 'autopilot' }, loadState: () => undefined, saveState() {}, log() {} });
console.log('made');
await runner.stop();
await runner.start('hello', false).catch(() => {});
console.log('started');`);
    expect(out.split('\n').filter(Boolean)).toEqual(['made', 'SDK openai', 'started']);
  });

  it('askrelay doctor loads the PostgreSQL client only for a database URL, and no SDK or chat library', { timeout: 90_000 }, async () => {
    const out = await importsIn(`const { runChecks } = await import('./src/cli/doctor/run-checks.ts');
const checks = { env: {}, urlFlag: 'http://127.0.0.1:9', dataDir: '/nonexistent/askrelay-doctor', timeoutMs: 500 };
await runChecks(checks);
console.log('sqlite checked');
await runChecks({ ...checks, databaseUrl: 'postgres://doctor@127.0.0.1:9/askrelay' });
console.log('postgres checked');`);
    expect(out.split('\n').filter(Boolean)).toEqual(['sqlite checked', 'SDK pg', 'postgres checked']);
  });

  it('a channel switched on loads its platform\'s library, and no other platform\'s', { timeout: 90_000 }, async () => {
    const out = await importsIn(`const { loadChannels } = await import('./src/channels/index.ts');
console.log('ready');
const loaded = await loadChannels({ telegram: {} });
console.log('loaded ' + Object.keys(loaded).join());`);
    const lines = out.split('\n').filter(Boolean);
    expect(lines[0]).toBe('ready');
    expect(lines.at(-1)).toBe('loaded telegram');
    expect(lines).toContain('SDK grammy');
    expect(lines.filter((l) => /@slack|@discordjs/.test(l))).toEqual([]);
  });
});
