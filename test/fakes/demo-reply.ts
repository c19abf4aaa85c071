// What the scripted agents of `askrelay demo` say once their question comes back: only the
// choice, read out of the tool result in whichever provider's words it arrived. The demo
// prints the tool result itself beside it (src/cli/demo-command.ts), which is where the
// providers differ. Used by demoModel (anthropic-script.ts) and demoChatModel (openai-server.ts).

/** The answer inside a tool result, or undefined when nobody answered. */
export function choiceIn(result: string): string | undefined {
  // Copilot's ask_user: "User selected: SQLite", "User responded: <text>".
  const copilot = /^(?:User selected|User responded|The user responded): ([\s\S]+)$/.exec(result);
  if (copilot) return copilot[1].trim();
  // Claude Code's AskUserQuestion: "Your questions have been answered: "<q>"="<a>". You can now…".
  const claude = /"="([\s\S]*?)"(?:\. You can now|\. Read the answers|, ")/.exec(result);
  if (claude) return claude[1];
  // Codex's request_user_input: {"answers":{"db":{"answers":["SQLite"]}}}.
  const codex = /"answers":\["([^"]*)"/.exec(result);
  if (codex && codex[1] !== 'None of the above') return codex[1];
  // askrelay's ask_user (Cursor's, Gemini CLI's ask_human): "Which database? → SQLite".
  const cursor = / → (?!\(no answer\))(.+)/.exec(result);
  return cursor?.[1].trim();
}

export function demoReply(result: string): string {
  const choice = choiceIn(result);
  return choice === undefined ? 'Nobody answered, so I will pick one myself.' : `Going with ${choice}.`;
}
