import { z } from 'zod';
import { RelayModeSchema } from '../cards/model.js';

// A session's record as the store keeps it and the API serves it: one agent conversation the
// relay runs on a provider. Declared here, beside the store that persists it, so the store
// depends on nothing above it; the sessions layer (src/sessions/model.ts) re-exports it with
// its requests. Provider ids are plain strings: the registry (providers/index.ts) lists them.

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
  /** Started in the provider's plan mode (Codex). */
  plan: z.boolean().optional(),
  /** Labels for routing, inherited by the session's cards. */
  labels: z.record(z.string(), z.string()).optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  error: z.string().optional(),
  /** The whole transcript on GET /api/sessions/:id; lists leave it out. */
  transcript: z.array(TranscriptEntrySchema).optional(),
});
export type Session = z.infer<typeof SessionSchema>;
