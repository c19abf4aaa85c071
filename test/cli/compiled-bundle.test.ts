import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// bin/askrelay.js runs the sources from a cached esbuild bundle (bin/compiled.js): made on
// the first start after a change, reused after, never stale; tsx when asked not to bundle.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CACHE = join(ROOT, 'node_modules/.cache/askrelay');
const BIN = join(ROOT, 'bin/askrelay.js');

function run(env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [BIN, '--version'], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout.trim()),
    ),
  );
}

const bundles = () => (existsSync(CACHE) ? readdirSync(CACHE).filter((name) => !name.endsWith('.tmp')) : []);
const { compiledEntry } = (await import(join(ROOT, 'bin/compiled.js'))) as { compiledEntry: () => Promise<string | undefined> };

describe('the cached bundle the command runs from', () => {
  it('is made once for the sources as they are, and the command runs from it', { timeout: 90_000 }, async () => {
    const entry = await compiledEntry();
    expect(entry).toMatch(/node_modules\/\.cache\/askrelay\/[0-9a-f]{16}\/main\.js$/);
    const made = statSync(fileURLToPath(entry!)).mtimeMs;
    expect(await compiledEntry()).toBe(entry);
    expect(statSync(fileURLToPath(entry!)).mtimeMs).toBe(made);
    const version = await run();
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    // tsx on the sources says the same.
    expect(await run({ ASKRELAY_NO_BUNDLE: '1' })).toBe(version);
  });

  it('an edited source makes a new bundle at the next start; the same contents again, the same bundle', { timeout: 90_000 }, async () => {
    const before = await compiledEntry();
    const file = join(ROOT, 'src/version.ts');
    const original = readFileSync(file);
    try {
      writeFileSync(file, Buffer.concat([original, Buffer.from('// an edit\n')]));
      const after = await compiledEntry();
      expect(after).not.toBe(before);
      expect(bundles()).toContain(after!.split('/').at(-2));
    } finally {
      writeFileSync(file, original);
    }
    expect(await compiledEntry()).toBe(before);
  });
});
