import { z } from 'zod';
import { LabelsSchema, RelayModeSchema } from '../cards/model.js';

// The sessions' vocabulary: the record (declared with the store that keeps it,
// src/store/session-record.ts) and the requests that start and continue a session. The
// session manager checks a start request against the providers it was given (startSessionSchema).

export {
  SessionSchema,
  SessionStatusSchema,
  TranscriptEntrySchema,
  type Session,
  type SessionStatus,
  type TranscriptEntry,
} from '../store/session-record.js';

export const StartSessionSchema = z.object({
  provider: z.string().min(1),
  engine: z.string().optional(),
  model: z.string().min(1).optional(),
  prompt: z.string().trim().min(1, 'prompt is empty'),
  relayMode: RelayModeSchema.optional(),
  agentsMayAnswer: z.boolean().optional(),
  askUserVariant: z.enum(['classic', 'form']).optional(),
  /** Codex: start in its Plan mode (its questions, request_user_input, exist only there). */
  plan: z.boolean().optional(),
  /** Labels for routing (docs/routing.md), inherited by the session's cards. */
  labels: LabelsSchema.optional(),
});
export type StartSession = z.infer<typeof StartSessionSchema>;

/** StartSessionSchema with the provider one of these ids. */
export const startSessionSchema = (provider: z.ZodType<string>) => StartSessionSchema.extend({ provider });

export const SessionMessageSchema = z.object({ text: z.string().trim().min(1, 'text is empty') });
