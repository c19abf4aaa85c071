import { readFileSync } from 'node:fs';
import type { Hono } from 'hono';

// The page is plain HTML, CSS and JavaScript: nothing to build, nothing fetched from
// elsewhere. It is public; it asks for the token before it shows anything. /sw.js is the
// service worker that shows Web Push notifications (public too: it holds no data).
const FILES: Record<string, string> = {
  '/': 'index.html',
  '/app.js': 'app.js',
  '/style.css': 'style.css',
  '/sw.js': 'sw.js',
};
const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

const read = (name: string) => readFileSync(new URL(`./web/${name}`, import.meta.url), 'utf8');

export function webPage(app: Hono) {
  for (const [path, name] of Object.entries(FILES)) {
    const body = read(name);
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
