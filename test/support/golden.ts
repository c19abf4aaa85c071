import { readFileSync } from 'node:fs';

/**
 * A committed golden file from test/providers/golden/: what a provider or the relay was seen
 * sending, written down once (each file's `source` says where and when). Tests compare the
 * code under test with it, never with the constant the code itself uses.
 */
export function readGolden<T>(name: string): T & { source: string } {
  return JSON.parse(readFileSync(new URL(`../providers/golden/${name}.json`, import.meta.url), 'utf8')) as T & { source: string };
}

/** One entry of golden/relay-tools.json: a relay tool as the Claude messages engine offers it. */
export interface GoldenRelayTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[]; [key: string]: unknown };
}

/** The four relay tools, in the order every provider lists them. */
export const goldenRelayTools = (): GoldenRelayTool[] => readGolden<{ tools: GoldenRelayTool[] }>('relay-tools').tools;
