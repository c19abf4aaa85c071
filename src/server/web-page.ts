import { readdirSync, readFileSync } from 'node:fs';
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

export function webPage(app: Hono) {
  for (const [path, name] of Object.entries(webFiles())) {
    const body = readFileSync(new URL(name, FOLDER), 'utf8');
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
