import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from 'playwright-core';

// Debian's Chromium, started quiet and offline; never `npx playwright install`.
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Collects a page's script errors and console errors into `errors`. 4xx answers are logged
 * by the browser as failed loads; the tests cause those on purpose, so they are left out.
 */
export function collectPageErrors(page: Page, errors: string[]): void {
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/Failed to load resource/.test(msg.text())) errors.push(msg.text());
  });
}

/**
 * A context whose page sends answers at once: the undo window (5 s by default, see
 * src/server/web/undo.js) is off unless the page's setting is changed. The undo window's own
 * test makes its context with browser.newContext() to see the default.
 */
export async function newContext(browser: Browser, options: BrowserContextOptions): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  await context.addInitScript(() => {
    if (localStorage.getItem('askrelay.undoSeconds') === null) localStorage.setItem('askrelay.undoSeconds', '0');
  });
  return context;
}
