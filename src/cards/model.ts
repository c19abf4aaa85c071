import { z } from 'zod';

// The card model: one shape for every provider and every surface (docs/architecture.md, "The card model").

export const LIMITS = {
  questions: 10,
  options: 20,
  textChars: 4000,
  titleChars: 500,
  labelChars: 200,
  descriptionChars: 1000,
  headerChars: 60,
  answerTextChars: 20_000,
} as const;

export const OptionSchema = z.object({
  label: z.string(),
  description: z.string().optional(),
});

export const FieldTypeSchema = z.enum(['string', 'number', 'boolean', 'choice', 'choices']);

export const QuestionSchema = z.object({
  id: z.string(),
  header: z.string().optional(),
  text: z.string(),
  options: z.array(OptionSchema),
  multiSelect: z.boolean(),
  freeText: z.boolean(),
  field: z.object({ type: FieldTypeSchema }).optional(),
});

export const AnswerEntrySchema = z.object({
  selected: z.array(z.string()),
  text: z.string().optional(),
});
export const AnswerSchema = z.record(z.string(), AnswerEntrySchema);

export const AnsweredBySchema = z.object({
  // system: the relay itself, e.g. a route's default answer at expiry ("route:<name>").
  kind: z.enum(['human', 'agent', 'system']),
  id: z.string(),
  surface: z.string(),
});

// Where an answer got to (docs/api.md, "Delivery"). The relay records sent, delivered and
// undelivered; queued and failed exist only on the page that holds an answer not yet sent.
export const DeliveryStateSchema = z.enum(['queued', 'sent', 'delivered', 'undelivered', 'failed']);
/** Who received the answer: the session's runner, an MCP call's response, a long poll, `askrelay ask`. */
export const DeliveryTargetSchema = z.enum(['session', 'mcp', 'long-poll', 'ask']);
export const DeliverySchema = z.object({
  state: DeliveryStateSchema,
  at: z.string(),
  to: DeliveryTargetSchema.optional(),
});

/** An answer the human gave after the card expired or was cancelled; the card keeps its status. */
export const LateAnswerSchema = z.object({
  answer: AnswerSchema,
  answeredBy: AnsweredBySchema,
  lateAt: z.string(),
});

export const CardStatusSchema = z.enum(['pending', 'answered', 'skipped', 'expired', 'cancelled']);

/**
 * Labels a session or a card carries for routing (docs/routing.md): up to 16 of `key: value`,
 * keys 1-32 lowercase letters, digits, `_`, `-` or `.`, values 1-100 characters.
 */
const LABEL_KEY = /^[a-z][a-z0-9_.-]{0,31}$/;
export const LabelsSchema = z
  .record(z.string(), z.string().min(1, 'a label value is empty').max(100, 'a label value is longer than 100 characters'))
  .superRefine((labels, ctx) => {
    // Checked here rather than by the key's schema: zod says only "Invalid key in record".
    for (const key of Object.keys(labels)) {
      if (!LABEL_KEY.test(key)) ctx.addIssue({ code: 'custom', path: [key], message: 'a label key is 1-32 lowercase letters, digits, _, - or ., starting with a letter' });
    }
    if (Object.keys(labels).length > 16) ctx.addIssue({ code: 'custom', message: 'at most 16 labels' });
  });
export const RelayModeSchema = z.enum(['autopilot', 'manual']);
export const LayoutSchema = z.enum(['steps', 'form']);

export const CardSchema = z.object({
  id: z.string(),
  sessionId: z.string().nullable(),
  provider: z.string(),
  engine: z.string().optional(),
  tool: z.string(),
  origin: z.enum(['native', 'relay']),
  kind: z.enum(['question', 'approval']),
  layout: LayoutSchema,
  title: z.string().optional(),
  questions: z.array(QuestionSchema),
  selectSeveral: z.boolean(),
  relayMode: RelayModeSchema,
  status: CardStatusSchema,
  createdAt: z.string(),
  expiresAt: z.string(),
  closedAt: z.string().optional(),
  answer: AnswerSchema.optional(),
  answeredBy: AnsweredBySchema.optional(),
  lateAnswer: LateAnswerSchema.optional(),
  /** Where the card's answer (or its late answer) got to; absent while nothing was answered. */
  delivery: DeliverySchema.optional(),
  /** Who asked: the agent of the card's session, an MCP client, or a person through the API. */
  askedBy: AnsweredBySchema.optional(),
  /** The card's labels: its session's, and those it was asked with. */
  labels: z.record(z.string(), z.string()).optional(),
  /**
   * A dialect whose own rules answer the card: "openclaw" (OpenClaw's ask_user) reads
   * plain-text replies as OpenClaw's bridge does, and lets an answer leave a question empty.
   */
  answerRules: z.literal('openclaw').optional(),
  /** The route (docs/routing.md) the card matched; absent when none did (it goes to everyone). */
  route: z.string().optional(),
  /** Who the card goes to: people, "everyone", chat channels ("slack", "telegram:-100123"); grows as it escalates. */
  routedTo: z.array(z.string()).optional(),
  /** Only the operator and the people and chats it is routed to see it. */
  restricted: z.literal(true).optional(),
  /** The route's escalation steps: at `at` (still pending) `to` is added to routedTo; `done` when that happened. */
  escalations: z.array(z.object({ at: z.string(), to: z.array(z.string()), done: z.string().optional() })).optional(),
  /** The route's default: at its deadline the card is answered with this reply instead of expiring. */
  onExpiry: z.object({ answer: z.string() }).optional(),
});

export type CardOption = z.infer<typeof OptionSchema>;
export type FieldType = z.infer<typeof FieldTypeSchema>;
export type Question = z.infer<typeof QuestionSchema>;
export type AnswerEntry = z.infer<typeof AnswerEntrySchema>;
export type Answer = z.infer<typeof AnswerSchema>;
export type AnsweredBy = z.infer<typeof AnsweredBySchema>;
export type DeliveryState = z.infer<typeof DeliveryStateSchema>;
export type DeliveryTarget = z.infer<typeof DeliveryTargetSchema>;
export type Delivery = z.infer<typeof DeliverySchema>;
export type LateAnswer = z.infer<typeof LateAnswerSchema>;
export type CardStatus = z.infer<typeof CardStatusSchema>;
export type RelayMode = z.infer<typeof RelayModeSchema>;
export type Layout = z.infer<typeof LayoutSchema>;
export type Card = z.infer<typeof CardSchema>;

// What a caller hands the relay to ask: loose on purpose (options as plain strings, ids
// optional); normalizeDraft turns it into Questions or says exactly what is wrong.
export const QuestionInputSchema = z.object({
  id: z.string().optional(),
  header: z.string().optional(),
  text: z.string(),
  options: z
    .array(z.union([z.string(), z.object({ label: z.string(), description: z.string().optional() })]))
    .optional(),
  multiSelect: z.boolean().optional(),
  freeText: z.boolean().optional(),
  field: z.object({ type: FieldTypeSchema }).optional(),
});

export const CardInputSchema = z.object({
  title: z.string().optional(),
  questions: z.array(QuestionInputSchema),
  layout: LayoutSchema.optional(),
  waitSeconds: z.number().positive().optional(),
  selectSeveral: z.boolean().optional(),
  labels: LabelsSchema.optional(),
});

export type QuestionInput = z.infer<typeof QuestionInputSchema>;
export type CardInput = z.infer<typeof CardInputSchema>;

// Everything about a card that its asker decides; the relay adds id, status and times.
export interface CardDraft extends CardInput {
  sessionId?: string | null;
  toolCallId?: string;
  provider?: string;
  engine?: string;
  tool?: string;
  origin?: 'native' | 'relay';
  kind?: 'question' | 'approval';
  relayMode?: RelayMode;
  askedBy?: AnsweredBy;
  /**
   * Keep options named "Other" (or alike) as ordinary options. Cards drop them, since every
   * surface offers its own way to type an answer; a dialect whose tool treats "Other" as an
   * ordinary label (OpenClaw's) keeps them.
   */
  keepOtherOptions?: boolean;
  answerRules?: Card['answerRules'];
}

