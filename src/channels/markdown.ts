import markdownit from 'markdown-it';

// Agents write markdown. Discord and Mattermost render it as it is; Telegram (HTML parse
// mode) and Slack (mrkdwn) each speak their own, so a question's text and an option's
// description are rewritten into it here: emphasis, code spans and blocks, links and lists
// keep their meaning, everything else is plain text, escaped for the platform. Parsed with
// markdown-it as the web page does (raw HTML off, no images, links only to http(s) and mailto).
// Pure; tested in test/channels/markdown.test.ts.

type Token = ReturnType<ReturnType<typeof markdownit>['parse']>[number];

/** How one platform writes each piece. Text reaches it escaped already. */
interface Dialect {
  escape(text: string): string;
  strong: [string, string];
  em: [string, string];
  strike: [string, string];
  code(escaped: string): string;
  block(escaped: string): string;
  link(href: string, label: string): string;
  /** A quote: around it, and before each of its lines. */
  quote: [string, string, string];
}

const md = markdownit({ html: false, linkify: true, breaks: true, typographer: false }).disable(['image']);
md.validateLink = (url: string) => /^(https?:|mailto:)/i.test(url.trim());

/** &, < and >: all that Telegram's HTML and Slack's mrkdwn need escaped in text. */
export const escapeMarkup = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const escapeHtml = escapeMarkup;

export const TELEGRAM: Dialect = {
  escape: escapeHtml,
  strong: ['<b>', '</b>'],
  em: ['<i>', '</i>'],
  strike: ['<s>', '</s>'],
  code: (t) => `<code>${t}</code>`,
  block: (t) => `<pre>${t}</pre>`,
  link: (href, label) => `<a href="${escapeHtml(href).replace(/"/g, '&quot;')}">${label}</a>`,
  quote: ['<blockquote>', '</blockquote>', ''],
};

// Slack's mrkdwn needs only &, < and > escaped; escaping also keeps `<!channel>` from pinging anyone.
export const SLACK: Dialect = {
  escape: escapeHtml,
  strong: ['*', '*'],
  em: ['_', '_'],
  strike: ['~', '~'],
  code: (t) => `\`${t}\``,
  block: (t) => `\`\`\`\n${t}\`\`\``,
  link: (href, label) => `<${escapeHtml(href).replace(/\|/g, '%7C')}|${label}>`,
  quote: ['', '', '> '],
};

/** Markdown as the platform's own formatting; plain text comes out as it went in, escaped. */
export function markdownFor(dialect: Dialect, text: string): string {
  const out: string[] = [];
  const lists: Array<{ ordered: boolean; n: number }> = [];
  let quoted = 0;
  for (const token of md.parse(text, {})) {
    switch (token.type) {
      case 'inline':
        out.push(inline(dialect, token.children ?? [], quoted ? dialect.quote[2] : ''));
        break;
      case 'blockquote_open':
        quoted += 1;
        out.push(dialect.quote[0]);
        break;
      case 'blockquote_close':
        quoted -= 1;
        if (out[out.length - 1] === '\n\n') out.pop();
        out.push(dialect.quote[1], '\n\n');
        break;
      case 'paragraph_open':
        if (quoted) out.push(dialect.quote[2]);
        break;
      case 'paragraph_close':
        // Inside a tight list the paragraph is hidden: the item's own line break ends it.
        out.push(lists.length ? (token.hidden ? '' : '\n') : '\n\n');
        break;
      case 'heading_close':
        out.push(dialect.strong[1], '\n\n');
        break;
      case 'heading_open':
        out.push(dialect.strong[0]);
        break;
      case 'bullet_list_open':
      case 'ordered_list_open':
        // A list inside an item starts on a line of its own.
        if (lists.length && !out[out.length - 1]?.endsWith('\n')) out.push('\n');
        lists.push({ ordered: token.type === 'ordered_list_open', n: Number(token.attrGet('start') ?? 1) });
        break;
      case 'bullet_list_close':
      case 'ordered_list_close':
        lists.pop();
        if (!lists.length) out.push('\n');
        break;
      case 'list_item_open': {
        const list = lists[lists.length - 1];
        out.push(`${'  '.repeat(lists.length - 1)}${list.ordered ? `${list.n++}. ` : '• '}`);
        break;
      }
      case 'list_item_close':
        if (!out[out.length - 1]?.endsWith('\n')) out.push('\n');
        break;
      case 'fence':
      case 'code_block':
        out.push(dialect.block(dialect.escape(token.content)), '\n\n');
        break;
      case 'hr':
        out.push('———\n\n');
        break;
      case 'td_close':
      case 'th_close':
        out.push(' | ');
        break;
      case 'tr_close':
        out.push('\n');
        break;
    }
  }
  return out.join('').replace(/ \| \n/g, '\n').trim();
}

/** One block's inline tokens; `linePrefix` starts every line after a break (a quote's "> "). */
function inline(dialect: Dialect, tokens: Token[], linePrefix: string): string {
  let out = '';
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    switch (token.type) {
      case 'text':
        out += dialect.escape(token.content);
        break;
      case 'softbreak':
      case 'hardbreak':
        out += `\n${linePrefix}`;
        break;
      case 'code_inline':
        out += dialect.code(dialect.escape(token.content));
        break;
      case 'strong_open':
      case 'strong_close':
        out += dialect.strong[token.type === 'strong_open' ? 0 : 1];
        break;
      case 'em_open':
      case 'em_close':
        out += dialect.em[token.type === 'em_open' ? 0 : 1];
        break;
      case 's_open':
      case 's_close':
        out += dialect.strike[token.type === 's_open' ? 0 : 1];
        break;
      case 'link_open': {
        // The label is plain text inside the platform's link: formatting inside links is dropped.
        const end = tokens.findIndex((t, j) => j > i && t.type === 'link_close');
        const label = tokens.slice(i + 1, end < 0 ? tokens.length : end).map((t) => t.content).join('');
        out += dialect.link(String(token.attrGet('href') ?? ''), dialect.escape(label));
        i = end < 0 ? tokens.length : end;
        break;
      }
      default:
        out += dialect.escape(token.content ?? '');
    }
  }
  return out;
}
