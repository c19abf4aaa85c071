// The page's one markdown renderer (markdown.js sets it up; markdown-it is served as
// /vendor/markdown-it.js). Its output is the only HTML the page builds from agent text.
import markdownit from '/vendor/markdown-it.js';
import { createMarkdown } from './markdown.js';

const md = createMarkdown(markdownit);

/** `el` with `text` as block markdown inside (class "md" styles it). */
export function withMarkdown(el, text) {
  el.classList.add('md');
  el.innerHTML = md.block(text);
  return el;
}

/** `el` with `text` as inline markdown inside. */
export function withInlineMarkdown(el, text) {
  el.classList.add('md');
  el.innerHTML = md.inline(text);
  return el;
}
