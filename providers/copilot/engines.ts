import type { EngineDeclaration, StartRequest } from '../../src/sessions/providers.js';

// The Copilot SDK's two engines, shared by the copilot and openai providers.

export const COPILOT_ENGINES: readonly EngineDeclaration[] = [
  { id: 'sdk', name: 'Copilot SDK; askrelay’s ask_user replaces the built-in one', default: true },
  {
    id: 'extension',
    name: 'Copilot SDK; Copilot’s own ask_user passes through',
    // Copilot's own ask_user gives up sooner than the relay's cards would wait.
    wait: { variable: 'ASKRELAY_WAIT_EXTENSION', default: '2h' },
    askUserVariants: ['classic', 'form'],
  },
];

/** The form variant is the built-in ask_user's, so the extension engine's only. */
export function checkCopilotStart({ engine, askUserVariant }: StartRequest): string | undefined {
  if (askUserVariant === 'form' && engine !== 'extension') {
    return 'askUserVariant "form" is Copilot\'s extension engine only; start the session with engine "extension".';
  }
  return undefined;
}
