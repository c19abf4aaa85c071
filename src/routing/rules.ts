import { z } from 'zod';
import { CHANNEL_IDS } from '../channels/config.js';
import { LabelsSchema } from '../cards/model.js';
import { parseDuration } from '../config.js';

// The routes (docs/routing.md): rules that say who a card goes to, declared once here and
// read by the file, PUT /api/routes and the relay core alike. A mistake is named by its rule
// and field ("rule 2 (payments): escalate[0].after: …"), so it can be found in the file.

export const EVERYONE = 'everyone';
const PERSON = /^[a-z][a-z0-9_-]{0,31}$/;
const CHANNEL = new RegExp(`^(${CHANNEL_IDS.join('|')})(?::([A-Za-z0-9_.@#-]{1,128}))?$`);

/** A target is a person's name, "everyone", a chat channel ("slack"), or one of its chats ("telegram:-100123"). */
export const TargetSchema = z.string().refine((t) => t === EVERYONE || PERSON.test(t) || CHANNEL.test(t), {
  error: `a target is a person's name, "everyone", or a chat channel (${CHANNEL_IDS.join(', ')}) with an optional ":<chat id>"`,
});
const Targets = z.array(TargetSchema).min(1, 'name at least one target');

/** One value, or any of several. */
const OneOrMore = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

const Duration = z.string().superRefine((text, ctx) => {
  try {
    parseDuration(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
  }
});

export const RouteMatchSchema = z
  .object({
    provider: OneOrMore.optional(),
    engine: OneOrMore.optional(),
    kind: z.union([z.enum(['question', 'approval']), z.array(z.enum(['question', 'approval'])).min(1)]).optional(),
    tool: OneOrMore.optional(),
    labels: LabelsSchema.optional(),
    session: OneOrMore.optional(),
  })
  .strict();

export const RouteRuleSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'a rule name is 1-64 letters, digits, _, . or -'),
    match: RouteMatchSchema.default({}),
    to: Targets,
    restrict: z.boolean().optional(),
    escalate: z.array(z.object({ after: Duration, to: Targets }).strict()).max(10, 'at most 10 escalation steps').optional(),
    onExpiry: z.object({ answer: z.string().trim().min(1, 'the default answer is empty').max(4000) }).strict().optional(),
  })
  .strict();

export const RoutesSchema = z
  .array(RouteRuleSchema)
  .max(200, 'at most 200 rules')
  .superRefine((rules, ctx) => {
    const seen = new Set<string>();
    rules.forEach((rule, i) => {
      if (seen.has(rule.name)) ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `another rule is already named "${rule.name}"` });
      seen.add(rule.name);
    });
  });

/** What PUT /api/routes takes and GET returns, and what routes.json holds. */
export const RoutesDocumentSchema = z.object({ routes: RoutesSchema }).strict();

export type RouteMatch = z.infer<typeof RouteMatchSchema>;
export type RouteRule = z.infer<typeof RouteRuleSchema>;
export type Routes = z.infer<typeof RoutesSchema>;

/** The routes in `value`, or a sentence naming each mistake's rule and field. */
export function parseRoutes(value: unknown): { routes: Routes } | { error: string } {
  // A bare list is read as the document's routes, so a file may hold either.
  const parsed = RoutesDocumentSchema.safeParse(Array.isArray(value) ? { routes: value } : value);
  if (parsed.success) return { routes: parsed.data.routes };
  const raw = (Array.isArray(value) ? value : (value as { routes?: unknown })?.routes) as { name?: unknown }[] | undefined;
  return { error: parsed.error.issues.slice(0, 3).map((issue) => describeIssue(issue, raw)).join('; ') };
}

function describeIssue(issue: z.core.$ZodIssue, raw: { name?: unknown }[] | undefined): string {
  const [top, index, ...rest] = issue.path;
  if (top !== 'routes' || typeof index !== 'number') return `${issue.path.join('.') || 'routes'}: ${issue.message}`;
  const name = raw?.[index]?.name;
  const rule = `rule ${index + 1}${typeof name === 'string' ? ` (${name})` : ''}`;
  const field = rest.reduce<string>((out, part) => (typeof part === 'number' ? `${out}[${part}]` : out ? `${out}.${String(part)}` : String(part)), '');
  return `${rule}: ${field || 'the rule'}: ${issue.message}`;
}

/** The people a list of targets names (not "everyone", not chats). */
export const peopleIn = (targets: readonly string[]): string[] => targets.filter((t) => t !== EVERYONE && PERSON.test(t) && !CHANNEL.test(t));

/** Which chat of `channel` a list of targets names: undefined for none, null for the channel's own chat. */
export function chatIn(targets: readonly string[], channel: string): string | null | undefined {
  for (const target of targets) {
    const m = CHANNEL.exec(target);
    if (m && m[1] === channel) return m[2] ?? null;
  }
  return undefined;
}

/** Whether the targets name `channel` (any chat of it). */
export const namesChannel = (targets: readonly string[], channel: string) => chatIn(targets, channel) !== undefined;
