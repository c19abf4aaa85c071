import { z } from 'zod';
import { RelayModeSchema } from '../cards/model.js';

// A session is one agent conversation the relay runs on a provider. Provider ids are plain
// strings here: the registry (providers/index.ts) lists them, and the session manager checks a
// start request against the providers it was given (startSessionSchema).

/**
 * starting → running ⇄ waiting (a card is open) → idle (the turn ended; the next message
 * continues) … → stopped (DELETE) | failed (the provider gave up). `stuck` is set by the
 * watchdog on a running turn with no events for too long; never on a waiting one.
 */
export const SessionStatusSchema = z.enum(['starting', 'running', 'waiting', 'idle', 'stuck', 'stopped', 'failed']);
export type SessionStatus = z.infer<typeof SessionStatusSchema>;

export const TranscriptEntrySchema = z.object({
  at: z.string(),
  role: z.enum(['user', 'assistant', 'tool', 'system']),
  text: z.string(),
  cardId: z.string().optional(),
});
export type TranscriptEntry = z.infer<typeof TranscriptEntrySchema>;

export const SessionSchema = z.object({
  id: z.string(),
  provider: z.string(),
  engine: z.string(),
  model: z.string().optional(),
  status: SessionStatusSchema,
  relayMode: RelayModeSchema,
  agentsMayAnswer: z.boolean(),
  /** Copilot's extension engine: its classic ask_user or the form variant. */
  askUserVariant: z.enum(['classic', 'form']).optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  error: z.string().optional(),
  /** The whole transcript on GET /api/sessions/:id; lists leave it out. */
  transcript: z.array(TranscriptEntrySchema).optional(),
});
export type Session = z.infer<typeof SessionSchema>;

export const StartSessionSchema = z.object({
  provider: z.string().min(1),
  engine: z.string().optional(),
  model: z.string().min(1).optional(),
  prompt: z.string().trim().min(1, 'prompt is empty'),
  relayMode: RelayModeSchema.optional(),
  agentsMayAnswer: z.boolean().optional(),
  askUserVariant: z.enum(['classic', 'form']).optional(),
});
export type StartSession = z.infer<typeof StartSessionSchema>;

/** StartSessionSchema with the provider one of these ids. */
export const startSessionSchema = (provider: z.ZodType<string>) => StartSessionSchema.extend({ provider });

export const SessionMessageSchema = z.object({ text: z.string().trim().min(1, 'text is empty') });
