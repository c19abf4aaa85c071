import { describe, expect, it } from 'vitest';
import { SLACK, TELEGRAM, markdownFor } from '../../src/channels/markdown.js';

// An agent's markdown as Telegram's HTML and Slack's mrkdwn (src/channels/markdown.ts): what
// each platform renders, and plain text left as it was (escaped).

const SAMPLE = 'Use `pg` or **SQLite**, _not_ ~~MySQL~~. See [the docs](https://example.com/a?b=1&c=2).';

describe('markdown for the chat platforms', () => {
  it('Telegram: its HTML tags', () => {
    expect(markdownFor(TELEGRAM, SAMPLE)).toBe(
      'Use <code>pg</code> or <b>SQLite</b>, <i>not</i> <s>MySQL</s>. See <a href="https://example.com/a?b=1&amp;c=2">the docs</a>.',
    );
    expect(markdownFor(TELEGRAM, '```sh\nrm -rf build && ls\n```')).toBe('<pre>rm -rf build &amp;&amp; ls\n</pre>');
  });

  it('Slack: mrkdwn', () => {
    expect(markdownFor(SLACK, SAMPLE)).toBe('Use `pg` or *SQLite*, _not_ ~MySQL~. See <https://example.com/a?b=1&amp;c=2|the docs>.');
    expect(markdownFor(SLACK, '```\nSELECT 1;\n```')).toBe('```\nSELECT 1;\n```');
  });

  it('lists, headings and paragraphs as lines', () => {
    const text = '# Plan\nFirst:\n\n- one\n- two\n  1. nested\n\n3. three\n4. four\n\nDone.';
    expect(markdownFor(SLACK, text)).toBe('*Plan*\n\nFirst:\n\n• one\n• two\n  1. nested\n\n3. three\n4. four\n\nDone.');
  });

  it('plain text stays as written, escaped; raw HTML and mentions are text', () => {
    expect(markdownFor(TELEGRAM, 'Which database?')).toBe('Which database?');
    expect(markdownFor(TELEGRAM, 'line one\nline two')).toBe('line one\nline two');
    expect(markdownFor(TELEGRAM, '<b>bold</b> & <script>')).toBe('&lt;b&gt;bold&lt;/b&gt; &amp; &lt;script&gt;');
    expect(markdownFor(SLACK, 'ping <!channel> & <@U123>')).toBe('ping &lt;!channel&gt; &amp; &lt;@U123&gt;');
  });

  it('quotes', () => {
    expect(markdownFor(SLACK, '> first\n> second\n\nafter')).toBe('> first\n> second\n\nafter');
    expect(markdownFor(TELEGRAM, '> quoted *text*')).toBe('<blockquote>quoted <i>text</i></blockquote>');
  });

  it('links only to http(s) and mailto; no image', () => {
    expect(markdownFor(TELEGRAM, '[x](javascript:alert(1))')).toBe('[x](javascript:alert(1))');
    expect(markdownFor(SLACK, '![pixel](https://evil.example/p.png)')).not.toContain('p.png|pixel>!');
    expect(markdownFor(SLACK, '[a|b](https://example.com/x|y)')).toBe('<https://example.com/x%7Cy|a|b>');
  });
});
