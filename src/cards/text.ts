// Text helpers every surface shares: shortening for display, and telling whether a text
// shows anything at all.

/** At most `max` UTF-16 units, ending in "…" when cut; never splits a surrogate pair. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

// Characters that show nothing: format characters (zero-width spaces and joiners, bidi
// marks, embeddings and isolates, the BOM, the soft hyphen, tags: \p{Cf}), the combining
// grapheme joiner, variation selectors, and the fillers that render blank (Hangul, Khmer,
// Mongolian, the blank Braille pattern).
const INVISIBLE = String.raw`\p{Cf}\u034F\u115F\u1160\u17B4\u17B5\u180B-\u180F\u2800\u3164\uFE00-\uFE0F\uFFA0\u{E0100}-\u{E01EF}`;
const VISIBLE = new RegExp(String.raw`[^\s\p{Cc}${INVISIBLE}]`, 'u');
const INVISIBLE_RUN = new RegExp(`[${INVISIBLE}]+`, 'gu');

/** Whether the text shows nothing: only whitespace, control and invisible characters (or none). */
export const isBlank = (text: string): boolean => !VISIBLE.test(text);

/** The text without its invisible characters; whitespace and line breaks stay. */
export const withoutInvisible = (text: string): string => text.replace(INVISIBLE_RUN, '');
