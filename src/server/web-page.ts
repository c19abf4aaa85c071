import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Hono } from 'hono';

// The page is plain HTML, CSS and JavaScript modules: nothing to build, nothing fetched from
// elsewhere. It is public; it asks for the token before it shows anything. /sw.js is the
// service worker that shows Web Push notifications (public too: it holds no data).
// Each file in web/ is read once and gets its own exact route, so only the files that
// exist are served and no path from the request ever reaches the file system.
const FOLDER = new URL('./web/', import.meta.url);
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/** URL path → file name: `/` is index.html; every .js and .css file under its own name. */
export function webFiles(): Record<string, string> {
  const files: Record<string, string> = { '/': 'index.html' };
  for (const name of readdirSync(FOLDER).sort()) {
    if (/^[a-z0-9-]+\.(js|css)$/.test(name)) files[`/${name}`] = name;
  }
  return files;
}

/**
 * Libraries the page imports, each one self-contained ES module from node_modules served
 * under a fixed name (never a path from the request): the URL path → package and file.
 */
export const VENDOR: Record<string, { pkg: string; file: string }> = {
  '/vendor/markdown-it.js': { pkg: 'markdown-it', file: 'dist/browser/markdown-it.esm.min.mjs' },
};

function vendorFile({ pkg, file }: { pkg: string; file: string }): string {
  const folder = dirname(createRequire(import.meta.url).resolve(`${pkg}/package.json`));
  // Its source map is not served: drop the comment that would make a browser ask for it.
  return readFileSync(join(folder, file), 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n');
}

export function webPage(app: Hono) {
  const files: Array<[string, string, string]> = [
    ...Object.entries(webFiles()).map(([path, name]): [string, string, string] => [path, name, readFileSync(new URL(name, FOLDER), 'utf8')]),
    ...Object.entries(VENDOR).map(([path, source]): [string, string, string] => [path, path, vendorFile(source)]),
  ];
  for (const [path, name, body] of files) {
    const type = TYPES[name.split('.').pop()!];
    app.get(path, (c) =>
      c.body(body, 200, {
        'content-type': type,
        'cache-control': 'no-cache',
        // No other page may frame this one (clickjacking an answer); nosniff and the rest come from app.ts.
        'content-security-policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'",
        // The service worker lives at /sw.js and controls the whole page.
        ...(path === '/sw.js' ? { 'service-worker-allowed': '/' } : {}),
      }),
    );
  }
}
