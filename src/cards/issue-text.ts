import type { z } from 'zod';

/** `questions[1].options[2].label` from a zod issue path. */
export function fieldPath(path: PropertyKey[]): string {
  return path.reduce<string>((out, key) => (typeof key === 'number' ? `${out}[${key}]` : out ? `${out}.${String(key)}` : String(key)), '');
}

/** The first problem of a tool call's arguments as one sentence naming the field, for the model. */
export function firstIssueText(error: z.ZodError): string {
  const issue = error.issues[0];
  return `${fieldPath(issue.path) || 'The arguments'} ${issue.message}`;
}
