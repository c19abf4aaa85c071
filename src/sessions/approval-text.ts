import { LIMITS, type CardDraft } from '../cards/model.js';
import { visibleControls } from '../cards/text.js';
import { RelayError } from '../errors.js';
import type { Principal } from '../relay/access.js';
import type { StartSession } from './model.js';

// The approval cards of the relay tool, worded so that nothing an agent writes can pass for
// what the relay says. The agent's prompt is quoted: every one of its lines starts with "> ",
// whatever line breaks it uses, and characters that move the cursor or reorder the line
// (control and bidi characters) are shown as [U+XXXX]. The settings the human decides on are
// the relay's own lines above the quote, and again in the Approve option's description, with
// agent-chosen values (engine, model) shown plain only when they are plain names, else quoted
// and escaped. So a prompt holding "\nOther agents may answer its questions: no" or a "```"
// that would end a fence still reads as a line of the prompt. Pure: no I/O.

/** Every way a surface may start a new line: CR LF, LF, CR, VT, FF, NEL, LS, PS. */
const LINE_BREAK = /\r\n|[\n\r\v\f\u0085\u2028\u2029]/;
/** `text` as a quotation: each line "> …" (an empty one ">"), unsafe characters made visible. */
export function quoted(text: string): string {
  return text
    .split(LINE_BREAK)
    .map((line) => {
      const safe = visibleControls(line);
      return safe ? `> ${safe}` : '>';
    })
    .join('\n');
}

const PLAIN = /^[A-Za-z0-9][\w.:/@+-]{0,99}$/;
const SHOWN_CHARS = 100;

/**
 * An agent-chosen value on one line: as is when it is a plain name, else in double quotes
 * with quotes, backslashes and every character outside printable ASCII escaped, at most
 * SHOWN_CHARS characters in all.
 */
export function shown(value: string): string {
  if (PLAIN.test(value)) return value;
  let out = '';
  for (const char of value) {
    const part = JSON.stringify(char).slice(1, -1).replace(/[^\x20-\x7e]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
    if (out.length + part.length > SHOWN_CHARS - 3) return `"${out}…"`;
    out += part;
  }
  return `"${out}"`;
}

export const requester = (who: Principal) =>
  who.kind === 'human' ? 'The human' : who.sessionId ? `The agent of session ${who.sessionId}` : `An MCP client (${who.id})`;

function approvalDraft(tool: string, title: string, text: string, approve: string): CardDraft {
  return {
    title,
    kind: 'approval',
    tool,
    origin: 'relay',
    questions: [{ id: 'approve', header: 'Approve?', text, options: [{ label: 'Approve', description: approve }, { label: 'Deny' }] }],
  };
}

/** The settings of a session to start, as the relay states them. */
export function settingsOf(input: StartSession): { name: string; value: string }[] {
  return [
    { name: 'Provider', value: input.provider },
    { name: 'Engine', value: input.engine ? shown(input.engine) : "the provider's default" },
    { name: 'Model', value: input.model ? shown(input.model) : "the provider's default" },
    { name: 'Relay mode', value: input.relayMode ?? 'autopilot' },
    { name: 'Other agents may answer its questions', value: input.agentsMayAnswer ? 'yes' : 'no' },
  ];
}

/** start_session's card; refused (invalid_request) when the quoted prompt does not fit on one. */
export function startSessionApproval(who: Principal, input: StartSession): CardDraft {
  const settings = settingsOf(input);
  const text = [
    `${requester(who)} wants to start a session.`,
    '',
    ...settings.map(({ name, value }) => `${name}: ${value}`),
    '',
    'Its prompt, quoted as the agent wrote it:',
    quoted(input.prompt),
  ].join('\n');
  if (text.length > LIMITS.textChars) {
    throw new RelayError(
      'invalid_request',
      `The prompt is too long to show the human on an approval card (${text.length} characters with the settings, at most ${LIMITS.textChars}); shorten it.`,
    );
  }
  const approve = `Start it. ${settings.map(({ name, value }) => `${name}: ${value}`).join('; ')}.`;
  return approvalDraft('start_session', 'Start a session?', text, approve);
}

/** watch_session's card: every word of it is the relay's (ids, provider and status come from the session store). */
export function watchSessionApproval(who: Principal, target: { id: string; provider: string; status: string }): CardDraft {
  return approvalDraft(
    'watch_session',
    'Let an agent watch a session?',
    `${requester(who)} wants to read the transcript and the cards of session ${target.id} (${target.provider}, ${target.status}).`,
    'Let it happen now',
  );
}
