import { z } from 'zod';
import { CardSchema } from '../../cards/model.js';
import { AuditEntrySchema } from '../../store/audit-store.js';
import { SessionSchema } from '../../store/session-record.js';

// What the /api routes answer with, where no other module declares it: the OpenAPI document
// (api-routes.ts) describes each response with these, and test/server/openapi-examples.test.ts
// checks real responses against them, so a field the relay adds without saying so fails there.

export const ErrorBodySchema = z.object({
  error: z.object({
    /** A code from src/errors.ts (docs/api.md lists them). */
    code: z.string(),
    message: z.string(),
  }),
  /** 409 already_answered and 410 card_closed: the card as it stands, with the winning answer. */
  card: CardSchema.optional(),
});

export const OkSchema = z.object({ ok: z.literal(true) });

export const HealthSchema = z.object({
  ok: z.boolean(),
  version: z.string(),
  /** The store every node shares: "sqlite" (embedded) or "postgres". */
  store: z.enum(['sqlite', 'postgres']).optional(),
  /** This node's name (ASKRELAY_NODE_ID). */
  node: z.string().optional(),
  /** 503: why this node cannot serve. */
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

export const CardListSchema = z.object({
  cards: z.array(CardSchema),
  /** More cards match than `limit` (default 500) let through. */
  hasMore: z.boolean(),
});

export const SessionListSchema = z.object({ sessions: z.array(SessionSchema) });

const EngineInfoSchema = z.object({
  id: z.string(),
  name: z.string(),
  default: z.boolean(),
  /** How long a card of this engine waits for its answer. */
  waitSeconds: z.number(),
  askUserVariants: z.array(z.string()).optional(),
});

export const ProviderListSchema = z.object({
  providers: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      engines: z.array(EngineInfoSchema),
      /** The environment variables that point the provider at its API. */
      variables: z.array(z.string()),
    }),
  ),
});

export const AuditPageSchema = z.object({
  entries: z.array(AuditEntrySchema),
  /** Present when the page is full: the `after` of the next page. */
  next: z.number().int().optional(),
});

export const AuditHeadSchema = z.object({ seq: z.number().int(), hash: z.string() });

export const AuditCheckSchema = z.object({
  ok: z.boolean(),
  entries: z.number().int(),
  /** One sentence per problem found, e.g. "entry 12 was edited". */
  problems: z.array(z.string()),
});

export const NodeListSchema = z.object({
  /** The node that answered. */
  node: z.string(),
  store: z.enum(['sqlite', 'postgres']),
  nodes: z.array(
    z.object({
      id: z.string(),
      url: z.string().optional(),
      startedAt: z.string(),
      heartbeatAt: z.string(),
      /** Sessions, MCP calls, streams and long polls the node holds. */
      holds: z.record(z.string(), z.number()),
      leases: z.array(z.string()),
    }),
  ),
});

export const MeSchema = z.union([
  z.object({ kind: z.literal('human'), id: z.string(), operator: z.boolean() }),
  z.object({ kind: z.literal('agent'), id: z.string(), sessionId: z.string().nullable() }),
]);

const UserSchema = z.object({ name: z.string(), createdAt: z.string(), links: z.array(z.string()) });
export const PersonSchema = UserSchema;
export const UnlinkedSchema = z.object({ ok: z.literal(true), name: z.string(), link: z.string() });
export const UserListSchema = z.object({ users: z.array(UserSchema) });
/** The one answer that carries a personal token: it is not kept, only its hash. */
export const NewUserSchema = UserSchema.extend({ token: z.string() });
export const UserRemovedSchema = z.object({ ok: z.literal(true), name: z.string() });

export const PushKeySchema = z.object({ publicKey: z.string() });
export const PushAddedSchema = z.object({ endpoint: z.string(), created: z.boolean() });
export const PushRemovedSchema = z.object({ ok: z.literal(true), endpoint: z.string() });

export const ChannelListSchema = z.object({
  channels: z.array(
    z.object({
      id: z.enum(['telegram', 'slack', 'discord', 'mattermost']),
      /** Where it posts and who may answer. */
      describe: z.string(),
      /** Posts and edits the platform has not taken yet. */
      queued: z.number().int(),
      nextAttemptAt: z.string().optional(),
      lastError: z.string().optional(),
      attempts: z.number().int().optional(),
    }),
  ),
});

/** GET /api/openapi.json describes itself loosely: it is the document. */
export const OpenApiDocumentSchema = z.looseObject({ openapi: z.string(), info: z.looseObject({ title: z.string(), version: z.string() }), paths: z.record(z.string(), z.unknown()) });
