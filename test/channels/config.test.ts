import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { channelsConfig, enabledChannels } from '../../src/channels/config.js';
import { runCli } from '../support/cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'askrelay-channels-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const telegramVars = { ASKRELAY_TELEGRAM_TOKEN: '1:abc', ASKRELAY_TELEGRAM_CHAT: '-1001', ASKRELAY_TELEGRAM_ANSWERERS: '42, 43' };

describe('channel configuration', () => {
  it('no channel unless a token is set', () => {
    const config = channelsConfig({}, dir);
    expect(enabledChannels(config)).toEqual([]);
    expect(config.backoffMs).toBe(1000);
  });

  it('reads each channel from its variables', () => {
    const config = channelsConfig(
      {
        ...telegramVars,
        ASKRELAY_SLACK_TOKEN: 'xoxb-1',
        ASKRELAY_SLACK_CHANNEL: 'C123',
        ASKRELAY_SLACK_ANSWERERS: 'U1',
        ASKRELAY_SLACK_SIGNING_SECRET: 's3cret',
        ASKRELAY_SLACK_PROVIDERS: 'claude,copilot',
        ASKRELAY_DISCORD_TOKEN: 'bot',
        ASKRELAY_DISCORD_CHANNEL: '99',
        ASKRELAY_DISCORD_ANSWERERS: '*',
        ASKRELAY_DISCORD_PUBLIC_KEY: 'a'.repeat(64),
        ASKRELAY_MATTERMOST_TOKEN: 'mm',
        ASKRELAY_MATTERMOST_URL: 'https://chat.example.com',
        ASKRELAY_MATTERMOST_CHANNEL: 'ch1',
        ASKRELAY_MATTERMOST_ANSWERERS: 'u1 u2',
        ASKRELAY_MATTERMOST_POLL: '5s',
        ASKRELAY_PUBLIC_URL: 'https://relay.example.com/',
        ASKRELAY_CHANNEL_BACKOFF: '250ms',
      },
      dir,
    );
    expect(config).toEqual({
      telegram: { token: '1:abc', chat: '-1001', answerers: ['42', '43'] },
      slack: { token: 'xoxb-1', channel: 'C123', answerers: ['U1'], signingSecret: 's3cret', route: { providers: ['claude', 'copilot'] } },
      discord: { token: 'bot', channel: '99', answerers: ['*'], publicKey: 'a'.repeat(64) },
      mattermost: { token: 'mm', url: 'https://chat.example.com', channel: 'ch1', answerers: ['u1', 'u2'], poll: '5s', pollMs: 5000 },
      publicUrl: 'https://relay.example.com/',
      backoffMs: 250,
    });
  });

  it('reads <data>/channels.json, and a variable wins over the file', () => {
    writeFileSync(join(dir, 'channels.json'), JSON.stringify({ telegram: { token: 'from-file', chat: '-5', answerers: ['1'] } }));
    expect(channelsConfig({}, dir).telegram).toEqual({ token: 'from-file', chat: '-5', answerers: ['1'] });
    expect(channelsConfig({ ASKRELAY_TELEGRAM_TOKEN: 'from-env' }, dir).telegram).toEqual({ token: 'from-env', chat: '-5', answerers: ['1'] });
  });

  it('a variable refines a channel set in the file, without its token', () => {
    writeFileSync(join(dir, 'channels.json'), JSON.stringify({ telegram: { token: 'from-file', chat: '-5', answerers: ['*'] } }));
    expect(channelsConfig({ ASKRELAY_TELEGRAM_ANSWERERS: '42' }, dir).telegram).toEqual({ token: 'from-file', chat: '-5', answerers: ['42'] });
    // Variables of a channel that is in neither place switch nothing on.
    expect(enabledChannels(channelsConfig({ ASKRELAY_SLACK_CHANNEL: 'C1' }, dir))).toEqual(['telegram']);
  });

  it('reads the file ASKRELAY_CHANNELS names', () => {
    const file = join(dir, 'elsewhere.json');
    writeFileSync(file, JSON.stringify({ slack: { token: 'x', channel: 'C1', answerers: ['U1'], signingSecret: 's' } }));
    expect(enabledChannels(channelsConfig({ ASKRELAY_CHANNELS: file }, dir))).toEqual(['slack']);
  });

  it.each([
    [{ ASKRELAY_TELEGRAM_TOKEN: 'x' }, 'channels: telegram.chat: required (ASKRELAY_TELEGRAM_CHAT); telegram.answerers: required (ASKRELAY_TELEGRAM_ANSWERERS)'],
    [{ ...telegramVars, ASKRELAY_TELEGRAM_ANSWERERS: ' , ' }, 'telegram.answerers: name at least one user id, or "*" for anyone in the chat (ASKRELAY_TELEGRAM_ANSWERERS)'],
    [{ ...telegramVars, ASKRELAY_TELEGRAM_API_ROOT: 'not a url' }, 'telegram.apiRoot'],
    [{ ASKRELAY_DISCORD_TOKEN: 'x', ASKRELAY_DISCORD_CHANNEL: '1', ASKRELAY_DISCORD_ANSWERERS: '*', ASKRELAY_DISCORD_PUBLIC_KEY: 'nothex' }, 'discord.publicKey: the application public key: 64 hex digits (ASKRELAY_DISCORD_PUBLIC_KEY)'],
    [{ ASKRELAY_SLACK_TOKEN: 'x', ASKRELAY_SLACK_CHANNEL: 'C', ASKRELAY_SLACK_ANSWERERS: 'U' }, 'slack.signingSecret: required (ASKRELAY_SLACK_SIGNING_SECRET)'],
    [{ ...telegramVars, ASKRELAY_CHANNEL_BACKOFF: 'soon' }, 'channels: backoff: "soon" is not a duration'],
    [{ ...telegramVars, ASKRELAY_CHANNEL_BACKOFF: '0' }, 'channels: backoff: "0" is not a positive duration.'],
    [{ ASKRELAY_CHANNELS: '/no/such/file.json' }, 'ASKRELAY_CHANNELS (/no/such/file.json): no such file.'],
  ])('says which setting is wrong: %j', (env, message) => {
    expect(() => channelsConfig(env as NodeJS.ProcessEnv, dir)).toThrow(message);
  });

  it('refuses a file that is not JSON, or has unknown settings', () => {
    writeFileSync(join(dir, 'channels.json'), '{ telegram: ');
    expect(() => channelsConfig({}, dir)).toThrow(/channels\.json: not valid JSON/);
    writeFileSync(join(dir, 'channels.json'), JSON.stringify({ telegram: { token: 'x', chat: '1', answerers: ['1'], chatId: '2' } }));
    expect(() => channelsConfig({}, dir)).toThrow(/telegram: Unrecognized key: "chatId"/);
    writeFileSync(join(dir, 'channels.json'), JSON.stringify({ telegram: { token: 'x', chat: '1', answerers: '42' } }));
    expect(() => channelsConfig({}, dir)).toThrow('channels: telegram.answerers: Invalid input: expected array, received string');
  });

  it('askrelay serve stops with the sentence and exit code 1 on a bad channel setting', async () => {
    const result = await runCli(['serve', '--port', '0', '--data', dir], { ASKRELAY_TELEGRAM_TOKEN: 'x', ASKRELAY_TELEGRAM_CHAT: '1' }, dir);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('telegram.answerers: required (ASKRELAY_TELEGRAM_ANSWERERS)');
  });
});
