// Text for display: shortening (transcripts, notifications, tables) and making the
// characters that steer a terminal or reorder a line visible.

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
