import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { mattermostChannel } from '../../src/channels/mattermost/index.js';
import { secretRedactor } from '../../src/channels/redact.js';
import { telegramChannel } from '../../src/channels/telegram/index.js';
import { listen, readRequest } from '../fakes/fake-http.js';
import { startChannelHarness, type ChannelHarness } from '../support/channel-harness.js';
import { waitUntil } from '../support/wait-until.js';

// A chat platform's words are logged, counted (the ops events) and shown on GET /api/channels
// (lastError); none of them may carry a secret the relay holds. Here the platforms are API
// roots that echo what they were sent: Telegram's path (/bot<token>/sendMessage) in its error
// descriptions, Mattermost's Authorization header in its error bodies. What the relay then
// logged, emitted and stored is searched for the tokens.

const TELEGRAM_TOKEN = '987654:AAH-echo-telegram-token-3f9a7c';
const MATTERMOST_TOKEN = 'mm-echo-token-8b1d5e0c2a4f6e9d';

let h: ChannelHarness | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await h?.stop();
  await close?.();
  h = close = undefined;
});

/** An API root answering every request with `answer(request)`, a JSON error that echoes it. */
async function echoingRoot(answer: (req: IncomingMessage, path: string) => { status: number; body: unknown }) {
  const seen: string[] = [];
  const server = createServer(async (req, res: ServerResponse) => {
    const { entry } = await readRequest(req);
    seen.push(entry.path);
    const { status, body } = answer(req, req.url ?? '');
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  const { base, close: stop } = await listen(server);
  close = stop;
  return { url: base, seen };
}

/** Everything the relay said of the channel: log lines, ops events, the stored and shown last errors. */
async function everythingSaid(harness: ChannelHarness): Promise<string> {
  const status = await harness.channels.status();
  const jobs = ['telegram', 'mattermost'].flatMap((id) => harness.store.channels.jobs(id as 'telegram'));
  return JSON.stringify({ logs: harness.logs, ops: harness.opsEvents, status, jobs: jobs.map((j) => j.lastError) });
}

describe('secrets in what a platform says', () => {
  it('Telegram: an API root that echoes the request path puts no bot token in the log, the ops events or /api/channels', async () => {
    let sends = 0;
    const root = await echoingRoot((_req, path) => {
      if (path.includes('/getUpdates')) return { status: 401, body: { ok: false, error_code: 401, description: `Unauthorized: no bot at ${path}` } };
      // The first post is an outage (retried, its error kept), the second a refusal for good.
      sends++;
      return sends === 1
        ? { status: 502, body: { ok: false, error_code: 502, description: `Bad Gateway: upstream ${path} (token ${TELEGRAM_TOKEN})` } }
        : { status: 400, body: { ok: false, error_code: 400, description: `Bad Request: chat not found at ${path}` } };
    });
    h = await startChannelHarness({ id: 'telegram', make: telegramChannel, config: { telegram: { token: TELEGRAM_TOKEN, chat: '-1001', answerers: ['*'], apiRoot: root.url } } });
    const card = await h.ask({ questions: [{ text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] });
    await h.idle();
    // The outage's error is kept and shown before the retry.
    const beforeRetry = await everythingSaid(h);
    expect(beforeRetry).toContain('Bad Gateway: upstream /bot<token>/sendMessage (token <redacted>)');
    await h.advance(1000);
    await waitUntil(() => h!.logs.some((l) => l.includes('gave up')) && h!.logs.some((l) => l.includes('getUpdates failed')), 'the refusal and the polling failure to be logged');

    const said = `${beforeRetry}\n${await everythingSaid(h)}`;
    // The platform did echo the token (the test is not vacuous) …
    expect(root.seen.some((p) => p.includes(TELEGRAM_TOKEN))).toBe(true);
    expect(h.logs).toContain(`telegram: gave up on the post of card ${card.id}: sendMessage: Bad Request: chat not found at /bot<token>/sendMessage`);
    expect(h.opsEvents.map((e) => e.event)).toEqual(expect.arrayContaining(['chat.failed', 'chat.refused']));
    // … and no form of it is anywhere the relay wrote.
    expect(said).not.toContain(TELEGRAM_TOKEN);
    expect(said).not.toContain(TELEGRAM_TOKEN.split(':')[1]);
    expect(said).not.toContain(encodeURIComponent(TELEGRAM_TOKEN));
  });

  it('Mattermost: an error body that quotes the Authorization header puts no token in the log, the ops events or /api/channels', async () => {
    const root = await echoingRoot((req, path) => ({ status: 500, body: { id: 'app.echo', message: `${req.method} ${path} failed for ${req.headers.authorization}`, status_code: 500 } }));
    h = await startChannelHarness({
      id: 'mattermost',
      make: mattermostChannel,
      config: { mattermost: { token: MATTERMOST_TOKEN, url: root.url, channel: 'town-square-id', answerers: ['*'], pollMs: 2000 } },
    });
    await h.ask({ questions: [{ text: 'Ship it?', options: ['Yes', 'No'] }] });
    await h.idle();
    await waitUntil(() => h!.logs.some((l) => l.includes('cannot read the channel')) && h!.logs.some((l) => l.includes('cannot deliver')), 'the poll and the post to fail');

    const said = await everythingSaid(h);
    expect(said).toContain('failed for Bearer <redacted>');
    expect(said).not.toContain(MATTERMOST_TOKEN);
  });
});

describe('secretRedactor', () => {
  it('replaces each secret as written and URL-encoded, the longest first, and any /bot…/ path; short ones are left', () => {
    const redact = secretRedactor(['123:abcdefgh', 'abcdefgh-longer', 'abc', undefined]);
    expect(redact('a /bot123:abcdefgh/getMe and 123%3Aabcdefgh and abcdefgh-longer and abc')).toBe('a /bot<token>/getMe and <redacted> and <redacted> and abc');
    expect(redact('GET /botANYTHING/getUpdates')).toBe('GET /bot<token>/getUpdates');
  });
});
