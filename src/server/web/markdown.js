// Agents write markdown. The page renders question text, titles and option descriptions with
// markdown-it (served from node_modules as /vendor/markdown-it.js, src/server/web-page.ts),
// set up here so that nothing an agent writes reaches the page as markup of its own: raw HTML
// off (shown as text), no images (nothing is loaded from elsewhere), links only to http(s)
// and mailto and opening in a new tab with no opener or referrer, no style attributes (the
// page's CSP allows none). Pure: the markdown-it factory is passed in, so the tests run it
// in Node (test/web/markdown.test.ts).

const SAFE_LINK = /^(https?:|mailto:)/i;

/** @param {(options: object) => any} markdownit the markdown-it factory (its default export) */
export function createMarkdown(markdownit) {
  const md = markdownit({ html: false, linkify: true, breaks: true, typographer: false });
  md.disable(['image']);
  md.validateLink = (url) => SAFE_LINK.test(url.trim());
  const renderToken = (tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options);
  const linkOpen = md.renderer.rules.link_open ?? renderToken;
  md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
    tokens[idx].attrSet('target', '_blank');
    tokens[idx].attrSet('rel', 'noopener noreferrer');
    return linkOpen(tokens, idx, options, env, self);
  };
  // Table cells carry their alignment as a style attribute: dropped, so the CSP has nothing to refuse.
  md.core.ruler.push('askrelay_no_style', (state) => {
    for (const token of state.tokens) if (token.attrs) token.attrs = token.attrs.filter(([name]) => name !== 'style');
  });
  return {
    /** A question's text: paragraphs, lists, code blocks. */
    block: (text) => md.render(text).trim(),
    /** A title or an option's description: one line's emphasis, code and links. */
    inline: (text) => md.renderInline(text),
  };
}
