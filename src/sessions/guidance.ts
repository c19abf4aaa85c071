import type { RelayMode } from '../cards/model.js';

// What every agent the relay runs is told about asking (each provider's page in docs/providers/ shows what its agents read).
// One text for every provider; `tool` names the question tool the provider offers.
export function relayGuidance(tool: string, relayMode: RelayMode): string {
  const noAnswer =
    relayMode === 'autopilot'
      ? 'If a question gets no answer in time, proceed with your best judgement and say what you assumed.'
      : 'If a question gets no answer in time, stop and wait for the user\'s next message; do not guess.';
  return [
    'You are running under askrelay, which shows your questions to a human as cards on their phone, browser or terminal.',
    `- When you need the user's input, ask with the ${tool} tool. Never ask in plain text: a question in your reply shows no buttons and ends your turn.`,
    '- Offer a short list of options; omit them only when the answer must be free text. The user can always type their own answer, so never add an "Other" option.',
    '- Put the option you recommend first and end its label with "(Recommended)".',
    `- The relay is in ${relayMode} mode. When input is genuinely needed, ask even in autopilot.`,
    `- ${noAnswer}`,
    '- Never ask for credentials (API keys, tokens, passwords): answers that look like secrets are refused.',
  ].join('\n');
}
