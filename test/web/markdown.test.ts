import markdownit from 'markdown-it';
import { describe, expect, it } from 'vitest';
import { createMarkdown } from '../../src/server/web/markdown.js';

// What the page makes of the markdown agents write (src/server/web/markdown.js), with the same
// markdown-it the page is served: formatting yes, anything that is markup of the agent's own no.

const md = createMarkdown(markdownit);

describe('markdown on the page', () => {
  it('renders code spans, fenced code, emphasis and lists', () => {
    expect(md.block('Use `pg` or **SQLite**, _not_ ~~MySQL~~.')).toBe('<p>Use <code>pg</code> or <strong>SQLite</strong>, <em>not</em> <s>MySQL</s>.</p>');
    expect(md.block('```sh\nnpm run migrate -- --to 42\n```')).toBe('<pre><code class="language-sh">npm run migrate -- --to 42\n</code></pre>');
    expect(md.block('- one\n- two\n\n1. first')).toBe('<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n<ol>\n<li>first</li>\n</ol>');
    expect(md.block('line one\nline two')).toBe('<p>line one<br>\nline two</p>');
  });

  it('opens links in a new tab with no opener and no referrer, bare addresses too', () => {
    expect(md.inline('[the docs](https://example.com/a?b=1)')).toBe('<a href="https://example.com/a?b=1" target="_blank" rel="noopener noreferrer">the docs</a>');
    expect(md.inline('see https://example.com')).toBe('see <a href="https://example.com" target="_blank" rel="noopener noreferrer">https://example.com</a>');
  });

  it('shows raw HTML as text, loads no image, and links nowhere but http(s) and mailto', () => {
    expect(md.block('<img src=x onerror=alert(1)> <b>bold</b>')).toBe('<p>&lt;img src=x onerror=alert(1)&gt; &lt;b&gt;bold&lt;/b&gt;</p>');
    expect(md.block('<script>alert(1)</script>')).toBe('<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>');
    const image = md.inline('![tracker](https://evil.example/pixel.png)');
    expect(image).not.toContain('<img');
    expect(md.inline('[click](javascript:alert(1))')).toBe('[click](javascript:alert(1))');
    expect(md.inline('[data](data:text/html;base64,PHNjcmlwdD4=)')).not.toContain('<a');
    expect(md.inline('[up](/api/cards)')).not.toContain('<a');
    expect(md.inline('[mail](mailto:ops@example.com)')).toContain('href="mailto:ops@example.com"');
    expect(md.inline('"quoted" & <tag attr="x">')).toBe('&quot;quoted&quot; &amp; &lt;tag attr=&quot;x&quot;&gt;');
  });

  it('leaves no style attribute for the CSP to refuse (table alignment)', () => {
    const table = md.block('| a | b |\n|:--|--:|\n| 1 | 2 |');
    expect(table).toContain('<table>');
    expect(table).not.toContain('style=');
  });
});
