// Text helpers every surface shares: shortening for display, telling whether a text
// shows anything at all, and making the characters that steer a terminal or reorder a
// line visible.

/** At most `max` UTF-16 units, ending in "…" when cut; never splits a surrogate pair. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max - 1);
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/** C0 and C1 controls but tab and newline; the bidi marks, embeddings, overrides and isolates. */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const codePoint = (char: string) => `[U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`;

/**
 * The text with every character that could move a terminal's cursor, send it an escape
 * sequence or reorder the line shown as [U+XXXX]: what an agent wrote cannot pass for
 * something else on a surface that prints it. Tab and newline stay.
 */
export function visibleControls(text: string): string {
  return text.replace(UNSAFE, codePoint);
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
