// Small text helpers the Claude adapter, approvals and code engine share.

/** Shortens `text` to at most `max` UTF-16 units, ending in "…"; never splits a surrogate pair. */
export function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = max - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}…`;
}

/**
 * The code engine's shortening (tool approval cards, transcript lines): like `cut`, but it
 * may leave half a surrogate pair at the cut. Kept apart so those texts stay as they were.
 */
export const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
