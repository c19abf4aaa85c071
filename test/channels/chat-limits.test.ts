import { describe, expect, it } from 'vitest';
import * as discord from '../../src/channels/discord/message.js';
import * as mattermost from '../../src/channels/mattermost/message.js';
import * as slack from '../../src/channels/slack/message.js';
import * as telegram from '../../src/channels/telegram/message.js';
import { cardOf as card } from '../support/card-fixture.js';

// What the real chat APIs would refuse or do with a card (issue 23), checked on the pure
// message builders of every platform: a long title, a mention in agent text, Slack's UTF-16
// counting. The fakes refuse the same (their own tests, and the channel tests that post).

const SETTINGS = { channel: 'ch', publicUrl: 'http://127.0.0.1:7070/', secret: 's'.repeat(32) };
const longTitle = card([{ text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }], { title: 'T'.repeat(3000) });

describe('a long title', () => {
  it('is cut to 256 characters on every platform, and the question still shows', () => {
    const telegramText = telegram.postOf(longTitle).text;
    const slackPost = slack.postOf(longTitle);
    const discordText = discord.postOf(longTitle).content ?? '';
    const mattermostText = mattermost.postOf(longTitle, SETTINGS).message;
    for (const text of [telegramText, JSON.stringify(slackPost.blocks), discordText, mattermostText]) {
      expect(text).toContain('Which database?');
      expect(text).not.toContain('T'.repeat(256));
    }
    // Discord's bold heading is closed: the cut is inside it.
    expect(discordText.split('\n')[0]).toMatch(/^\*\*Question: T+…\*\*$/);
    expect(mattermostText.split('\n')[0]).toMatch(/^\*\*Question: T+…\*\*$/);
  });
});

describe('mentions in agent text', () => {
  const loud = card([{ header: '@here', text: 'Tell @channel and @all, ask @alice (mail bob@example.com)', options: [{ label: 'Ping @here', description: 'or @channel' }, 'No'] }], {
    title: '@channel: release',
  });

  it('Mattermost: @channel, @here, @all and @name notify nobody; an e-mail address is left as it is', () => {
    const message = mattermost.postOf(loud, SETTINGS).message;
    expect(message).not.toMatch(/(^|[^\w@.])@(channel|here|all|alice)\b/);
    expect(message).toContain('@\u200bchannel');
    expect(message).toContain('@\u200balice');
    expect(message).toContain('bob@example.com');
    expect(mattermost.closedOf({ ...loud, status: 'skipped' }).message).not.toMatch(/(^|\s)@channel\b/);
  });

  it('Slack: <!channel> and <!here> are escaped, so they show and ping nobody', () => {
    const pinging = card([{ text: 'Hey <!channel> and <!here>', options: ['Yes', 'No'] }], { title: '<!everyone>' });
    const post = slack.postOf(pinging);
    // Slack parses mentions in mrkdwn and in the fallback text; a header's plain_text shows as written.
    const parsed = [post.text, ...post.blocks.flatMap((b) => (b.type === 'section' && b.text.type === 'mrkdwn' ? [b.text.text] : []))].join('\n');
    expect(parsed).not.toMatch(/<!(channel|here|everyone)>/);
    expect(parsed).toContain('&lt;!channel&gt;');
    expect(post.blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: 'Question: <!everyone>', emoji: true } });
  });

  it('Discord: no mention is parsed', () => {
    expect(discord.postOf(loud).allowed_mentions).toEqual({ parse: [] });
  });
});

describe('Slack counts in UTF-16 units', () => {
  it('a label of 75 emoji (150 units) is cut on its button and listed whole in the text', () => {
    const emoji = '😀'.repeat(75);
    const post = slack.postOf(card([{ text: 'Pick one', options: [emoji, 'Plain'] }]));
    const buttons = post.blocks.flatMap((b) => (b.type === 'actions' ? b.elements : []));
    expect(buttons[0].text.text.length).toBeLessThanOrEqual(75); // Slack's limit, in UTF-16 units
    const section = post.blocks.find((b) => b.type === 'section') as { text: { text: string } };
    expect(section.text.text).toContain(`• ${emoji}`);
  });
});
