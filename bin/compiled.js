// The command's sources compiled once, so that `askrelay serve` listens in well under a second.
// Loading every TypeScript module through tsx's loader costs about a second at each start
// (one hop to the loader thread per module); one esbuild bundle (esbuild is what tsx compiles
// with) loads in a fraction of that. The bundle is kept in node_modules/.cache/askrelay/ under a
// fingerprint of every source file's path and contents, so an edited source makes a new
// bundle at the next start and nothing stale ever runs. Packages stay outside
// the bundle, and the modules loaded on use (provider SDK engines, commands) stay separate
// chunks, loaded when used.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCES = ['src', 'providers'];
const ENTRY = join(ROOT, 'src/cli/main.ts');
const CACHE = join(ROOT, 'node_modules/.cache/askrelay');
/**
 * When a new bundle is made, an old one is removed once it is not among the newest few and
 * nothing started from it for a week: a relay still running from it may yet load a chunk.
 */
const KEEP = 3;
const UNUSED_MS = 7 * 24 * 3600 * 1000;

function fingerprint() {
  // The sources' contents (about a megabyte, read in a few milliseconds): an edit always makes
  // a new bundle, and a checkout that only touches times does not.
  const hash = createHash('sha256');
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|js|json)$/.test(entry.name)) hash.update(`${relative(ROOT, path)}\0`).update(readFileSync(path)).update('\0');
    }
  };
  SOURCES.forEach((dir) => walk(join(ROOT, dir)));
  hash.update(readFileSync(join(ROOT, 'package.json')));
  hash.update(process.version);
  return hash.digest('hex').slice(0, 16);
}

/** Each module's import.meta.url stays its source file's, as the web page's assets and package.json are found from it. */
const sourceUrls = {
  name: 'source-import-meta-url',
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      return { contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'ts' };
    });
  },
};

async function build(dir) {
  const { build: esbuild } = await import('esbuild');
  const temp = `${dir}.${process.pid}.tmp`;
  await esbuild({
    entryPoints: [ENTRY],
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node.split('.')[0]}`,
    packages: 'external',
    keepNames: true,
    outdir: temp,
    logLevel: 'silent',
    plugins: [sourceUrls],
  });
  try {
    renameSync(temp, dir);
  } catch {
    // Another start made the same bundle meanwhile: theirs is as good.
    rmSync(temp, { recursive: true, force: true });
  }
  const old = readdirSync(CACHE)
    .filter((name) => !name.endsWith('.tmp'))
    .map((name) => ({ name, at: statSync(join(CACHE, name)).mtimeMs }))
    .sort((a, b) => b.at - a.at)
    .slice(KEEP)
    .filter(({ at }) => Date.now() - at > UNUSED_MS);
  old.forEach(({ name }) => rmSync(join(CACHE, name), { recursive: true, force: true }));
}

/** The bundle's entry URL, made if needed; undefined when it cannot be (tsx runs the sources instead). */
export async function compiledEntry() {
  if (process.env.ASKRELAY_NO_BUNDLE === '1') return undefined;
  try {
    const dir = join(CACHE, fingerprint());
    const main = join(dir, 'main.js');
    if (!existsSync(main)) {
      mkdirSync(dirname(dir), { recursive: true });
      await build(dir);
    } else {
      const now = new Date();
      utimesSync(dir, now, now); // started from: kept (see UNUSED_MS)
    }
    return pathToFileURL(main).href;
  } catch {
    return undefined;
  }
}
