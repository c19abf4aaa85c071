import { describe, expect, it } from 'vitest';
import { DEFAULT_API_URL as DISCORD_DEFAULT } from '../../src/channels/discord/client.js';
import { DEFAULT_API_URL as SLACK_DEFAULT } from '../../src/channels/slack/client.js';
import { DEFAULT_API_ROOT as TELEGRAM_DEFAULT } from '../../src/channels/telegram/client.js';
import type { ChannelsConfig } from '../../src/channels/config.js';
import { channelCheck, modelsUrl, PLATFORMS, providerCheck, shownUrl, type PendingCheck } from '../../src/cli/doctor/endpoints.js';
import { exitCode, redact, renderReport, result } from '../../src/cli/doctor/report.js';
import { diskResult, folderResults, migrationResults, modeResult, sqliteResults, vapidProblem } from '../../src/cli/doctor/verdicts.js';
import { generateVapidKeys } from '../../src/push/vapid-keys.js';

// askrelay doctor's pure parts: the report, and what it makes of each fact (test/cli/doctor.test.ts
// runs the command against a relay and the fakes).

describe('the report', () => {
  const results = [
    result('relay', 'relay', 'ok', 'The relay answers.'),
    result('provider:claude', 'claude', 'info', 'not configured.'),
    result('disk', 'free disk', 'warn', 'Only 900 MB free.'),
  ];

  it('one aligned line per result, a capital to start each sentence, then a summary; warnings alone exit 0', () => {
    expect(renderReport(results)).toBe(
      ['ok    relay      The relay answers.', 'info  claude     Not configured.', 'warn  free disk  Only 900 MB free.', '', 'No problems; 1 warning worth a look.'].join('\n'),
    );
    expect(exitCode(results)).toBe(0);
    const failed = [...results, result('store', 'store', 'fail', 'Damaged.')];
    expect(renderReport(failed).split('\n').at(-1)).toBe('1 problem to fix (FAIL) and 1 warning; each line says what to do.');
    expect(exitCode(failed)).toBe(1);
    expect(renderReport([results[0]]).split('\n').at(-1)).toBe('All well: 1 check passed.');
  });

  it('redact replaces every secret of six characters or more wherever it appears, the longest first', () => {
    const shown = redact([result('x', 'x', 'fail', 'Refused abcdef-secret and abcdef; kept "abc".')], ['abcdef', 'abcdef-secret', 'abc', undefined]);
    expect(shown[0].message).toBe('Refused *** and ***; kept "abc".');
  });
});

describe('providers', () => {
  const claude = { id: 'claude', name: 'Claude', variables: ['ANTHROPIC_BASE_URL', 'ANTHROPIC_API_KEY'] };
  const pending = (check: ReturnType<typeof providerCheck>) => {
    if (!('request' in check)) throw new Error(`no request: ${check.message}`);
    return check as PendingCheck;
  };

  it('unset is info; a base URL without its key FAILs; a key alone is the default endpoint (info); a bad URL FAILs', () => {
    expect(providerCheck(claude, {})).toMatchObject({ status: 'info', message: 'Not configured (ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY are unset).' });
    expect(providerCheck(claude, { ANTHROPIC_BASE_URL: 'http://x' })).toMatchObject({ status: 'fail', message: expect.stringContaining('ANTHROPIC_BASE_URL is set but ANTHROPIC_API_KEY is not') });
    expect(providerCheck(claude, { ANTHROPIC_API_KEY: 'k' })).toMatchObject({ status: 'info', message: expect.stringContaining("sessions use Claude's default endpoint") });
    expect(providerCheck(claude, { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'ftp://x' })).toMatchObject({ status: 'fail', message: expect.stringContaining('is not an http(s) URL') });
  });

  it('with both, one GET to the model list, without the key; any status is an answer', () => {
    const check = pending(providerCheck(claude, { ANTHROPIC_API_KEY: 'sk-key-1234567', ANTHROPIC_BASE_URL: 'http://127.0.0.1:1234' }));
    expect(check.request.url).toBe('http://127.0.0.1:1234/v1/models');
    expect(JSON.stringify(check.request.init)).not.toContain('sk-key');
    expect(check.finish({ answered: true, status: 404, body: undefined })).toMatchObject({ status: 'ok', message: expect.stringContaining('answers (HTTP 404') });
    expect(check.finish({ answered: false, reason: 'connect ECONNREFUSED 127.0.0.1:1234' }).message).toBe(
      'ANTHROPIC_BASE_URL http://127.0.0.1:1234/ does not answer (connect ECONNREFUSED 127.0.0.1:1234); check the address or unset it.',
    );
    const blocked = pending(providerCheck(claude, { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' }));
    expect(blocked.finish({ answered: false, reason: 'bad port' }).message).toContain('refuses port 9: it is on the fetch standard\'s list of blocked ports');
  });

  it('the model list is below the version of an OpenAI-style base, and at /v1/models of an Anthropic-style one', () => {
    expect(modelsUrl(new URL('https://api.openai.com/v1'))).toBe('https://api.openai.com/v1/models');
    expect(modelsUrl(new URL('https://api.x.ai/v1/'))).toBe('https://api.x.ai/v1/models');
    expect(modelsUrl(new URL('https://api.anthropic.com'))).toBe('https://api.anthropic.com/v1/models');
    expect(modelsUrl(new URL('https://api.deepseek.com/anthropic'))).toBe('https://api.deepseek.com/anthropic/v1/models');
  });

  it('a URL is shown without its password or query', () => {
    expect(shownUrl('postgres://relay:pa55word@db:5432/askrelay?sslmode=require')).toBe('postgres://relay:***@db:5432/askrelay');
    expect(shownUrl('https://proxy.example/v1?key=sk-123')).toBe('https://proxy.example/v1');
  });
});

describe('chat channels', () => {
  const config = (c: Partial<ChannelsConfig>): ChannelsConfig => ({ backoffMs: 1000, ...c });
  const who = { answerers: ['*'] };

  it("the platforms' default roots are their clients' own", () => {
    expect(PLATFORMS.telegram.root(config({}))).toBe(TELEGRAM_DEFAULT);
    expect(PLATFORMS.slack.root(config({}))).toBe(SLACK_DEFAULT);
    expect(PLATFORMS.discord.root(config({}))).toBe(DISCORD_DEFAULT);
  });

  it('reads each platform\'s refusal as a FAIL naming the token setting, its busy answers as a warning', () => {
    const slack = channelCheck('slack', config({ slack: { token: 'xoxb-1', channel: 'C1', signingSecret: 's', ...who } }));
    expect(slack.request).toMatchObject({ url: 'https://slack.com/api/auth.test', init: { method: 'POST' } });
    expect(slack.finish({ answered: true, status: 200, body: { ok: false, error: 'invalid_auth' } })).toMatchObject({ status: 'fail', message: expect.stringContaining('Slack refused the token (invalid_auth) on auth.test: check ASKRELAY_SLACK_TOKEN') });
    expect(slack.finish({ answered: true, status: 503, body: 'Service Unavailable' })).toMatchObject({ status: 'warn' });

    const discord = channelCheck('discord', config({ discord: { token: 'd', channel: '1', publicKey: 'a'.repeat(64), apiUrl: 'http://fake/api/v10/', ...who } }));
    expect(discord.request.url).toBe('http://fake/api/v10/users/@me');
    expect(discord.finish({ answered: true, status: 401, body: { message: '401: Unauthorized', code: 0 } }).message).toContain('Discord refused the token (401: Unauthorized)');

    const mattermost = channelCheck('mattermost', config({ mattermost: { token: 'm', url: 'https://chat.example/', channel: 'c', pollMs: 2000, ...who } }));
    expect(mattermost.request.url).toBe('https://chat.example/api/v4/users/me');
    expect(mattermost.finish({ answered: false, reason: 'getaddrinfo ENOTFOUND chat.example' }).message).toBe(
      'Cannot reach Mattermost at https://chat.example/ (getaddrinfo ENOTFOUND chat.example); check ASKRELAY_MATTERMOST_URL and the network.',
    );
  });

  it('an answer echoing the Telegram path never shows the token, however short', () => {
    const telegram = channelCheck('telegram', config({ telegram: { token: '1:x', chat: '1', ...who } }));
    const shown = telegram.finish({ answered: true, status: 404, body: { error: 'No route GET /bot1:x/getMe' } });
    expect(shown.status).toBe('fail');
    expect(shown.message).toContain('/bot***/getMe');
    expect(shown.message).not.toContain('1:x');
  });
});

describe('files, disk and store', () => {
  const file = { path: '/d/token', exists: true, mode: 0o644 };

  it('a secret file wider than 0600 FAILs when the folder lets others reach it, and warns when it does not', () => {
    expect(modeResult('t', 't', file, 0o700, 'the relay token')?.status).toBe('warn');
    expect(modeResult('t', 't', file, 0o711, 'the relay token')?.status).toBe('fail');
    expect(modeResult('t', 't', { ...file, mode: 0o640 }, 0o701, 'the relay token')?.status).toBe('warn');
    expect(modeResult('t', 't', { ...file, mode: 0o600 }, 0o777, 'the relay token')).toBeUndefined();
  });

  it('the data folder: missing FAILs on SQLite (info on PostgreSQL); writable by others FAILs; another owner warns', () => {
    const folder = { path: '/d', exists: true, isDirectory: true, mode: 0o700, uid: 1000, writable: true, me: 1000 };
    expect(folderResults(folder, false)).toEqual([result('data-folder', 'data folder', 'ok', '/d is 0700, yours and writable.')]);
    expect(folderResults({ path: '/d', exists: false }, false)[0].status).toBe('fail');
    expect(folderResults({ path: '/d', exists: false }, true)[0].status).toBe('info');
    expect(folderResults({ ...folder, mode: 0o777 }, false).map((r) => r.status)).toEqual(['fail']);
    expect(folderResults({ ...folder, uid: 0, writable: false }, false).map((r) => [r.status, r.message.slice(0, 40)])).toEqual([
      ['warn', '/d belongs to uid 0, not to you (uid 100'],
      ['fail', '/d cannot be written by you: "askrelay s'],
    ]);
  });

  it('free disk: FAIL under 100 MB, warn under 1 GB', () => {
    expect(diskResult('/d', 50 * 1024 ** 2)).toMatchObject({ status: 'fail', message: expect.stringMatching(/^Only 50 MB free/) });
    expect(diskResult('/d', 500 * 1024 ** 2).status).toBe('warn');
    expect(diskResult('/d', 2 * 1024 ** 3)).toMatchObject({ status: 'ok', message: '2.0 GB free on the file system of /d.' });
  });

  it('VAPID keys: a pair whose halves match passes; a swapped public key does not', () => {
    const pair = generateVapidKeys();
    expect(vapidProblem(pair)).toBeUndefined();
    expect(vapidProblem({ ...pair, publicKey: generateVapidKeys().publicKey })).toContain('does not belong to its private key');
    expect(vapidProblem({ publicKey: 'x' })).toContain('does not hold a VAPID key pair');
  });

  it('the SQLite file: damage FAILs, missing tables or columns warn', () => {
    const expected = { cards: ['id', 'data'], audit: ['seq'] };
    expect(sqliteResults('/d/db', { exists: true, quickCheck: ['*** in database main ***', 'Page 3: btreeInitPage() returns error code 11'], tables: {} }, expected)).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('fails PRAGMA quick_check (*** in database main ***; Page 3'),
    });
    expect(sqliteResults('/d/db', { exists: true, quickCheck: ['ok'], tables: { cards: ['id'] } }, expected).message).toContain('lacks column cards.data, table audit');
    expect(sqliteResults('/d/db', { exists: true, quickCheck: ['ok'], tables: { cards: ['id', 'data', 'extra'], audit: ['seq'] } }, expected).status).toBe('ok');
  });

  it('migrations: a name that differs FAILs; unknown and missing ones warn', () => {
    const known = [{ version: 1, name: 'cards', sql: '' }, { version: 2, name: 'sessions', sql: '' }];
    expect(migrationResults('The database', [{ version: 1, name: 'cards' }, { version: 2, name: 'sessions' }], known).status).toBe('ok');
    expect(migrationResults('The database', [{ version: 1, name: 'other' }], known).status).toBe('fail');
    expect(migrationResults('The database', [{ version: 1, name: 'cards' }], known).message).toContain('lacks migrations 2 (sessions)');
    expect(migrationResults('The database', undefined, known).message).toContain('no schema_migrations table');
  });
});
