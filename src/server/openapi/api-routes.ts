import { z } from 'zod';
import { AnswerSchema, CardInputSchema, CardSchema, QuestionSchema } from '../../cards/model.js';
import type { ErrorCode } from '../../errors.js';
import { SessionMessageSchema } from '../../sessions/model.js';
import { EndpointSchema, PushSubscriptionSchema } from '../../push/subscription-schema.js';
import { AuditEntrySchema } from '../../store/audit-store.js';
import { SessionSchema } from '../../store/session-record.js';
import { AuditPageQuerySchema } from '../audit-routes.js';
import { LoginSchema } from '../auth.js';
import { AnswerBodySchema, ListQuerySchema, ReplyBodySchema, WaitQuerySchema } from '../card-routes.js';
import { SessionPatchSchema } from '../session-routes.js';
import { NewLinkSchema, NewUserSchema as NewUserBodySchema } from '../user-routes.js';
import * as api from './api-schemas.js';
import { RoutesDocumentSchema } from '../../routing/rules.js';

// Every /api route as data: who may call it, the zod schemas that validate its request (the
// very ones its handler reads with) and describe its responses, the errors it may answer
// with, and an example request. document.ts turns the table into the OpenAPI document;
// test/server/openapi.test.ts holds it against the routes the app really has.

export type Auth = 'public' | 'token' | 'human' | 'operator';

export interface ApiResponse {
  description: string;
  schema?: z.ZodType;
  /** Default application/json. */
  contentType?: string;
}

export interface ApiRoute {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** The OpenAPI form: /api/cards/{id}. */
  path: string;
  summary: string;
  tag: 'cards' | 'sessions' | 'web page' | 'relay' | 'audit' | 'push' | 'events' | 'people';
  /** public: no token; token: the operator's, a person's, the page's login or a session's agent token; human: not an agent's; operator: the relay token (or the page) only. */
  auth: Auth;
  body?: z.ZodType;
  query?: z.ZodObject;
  /** The successful responses; the errors come from `errors`. */
  ok: Record<number, ApiResponse>;
  errors?: ErrorCode[];
  /** The request the document shows (path ids and the login's token are the sender's to fill in). */
  example?: { body?: unknown; query?: Record<string, string>; headers?: Record<string, string> };
  description?: string;
}

/** The schemas the document names (components.schemas) wherever they appear. */
export const NAMED_SCHEMAS = { Card: CardSchema, Question: QuestionSchema, Answer: AnswerSchema, CardInput: CardInputSchema, Session: SessionSchema, AuditEntry: AuditEntrySchema };

const json = (description: string, schema: z.ZodType): ApiResponse => ({ description, schema });
const card = (description: string) => json(description, CardSchema);
const session = (description: string) => json(description, SessionSchema);
/** What every route that reads a JSON body may refuse. */
const BODY: ErrorCode[] = ['malformed_json', 'invalid_request', 'body_too_large', 'unsupported_media_type'];
const ANSWER: ErrorCode[] = [
  ...BODY,
  'not_found',
  'already_answered',
  'card_closed',
  'agents_not_allowed',
  'own_session',
  'human_only',
  // A person answering an approval that grants the operator's power (src/relay/access.ts).
  'operator_only',
  'invalid_answer',
  'ambiguous_reply',
  'unknown_question',
  'missing_answer',
  'empty_answer',
  'unknown_option',
  'too_many_choices',
  'free_text_not_allowed',
  'credential_refused',
  'idempotency_key_reused',
];

const EXAMPLE_CARD = { title: 'Schema change', questions: [{ id: 'db', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] };
const EXAMPLE_ANSWER = { answers: { db: { selected: ['PostgreSQL'] } } };

export function apiRoutes({ startSession }: { startSession: z.ZodType }): ApiRoute[] {
  return [
    { method: 'get', path: '/api/health', summary: 'Whether this node serves (a load balancer\'s check)', tag: 'relay', auth: 'public', ok: { 200: json('The node serves.', api.HealthSchema) }, errors: ['store_unavailable'] },
    { method: 'get', path: '/api/openapi.json', summary: 'This document', tag: 'relay', auth: 'public', ok: { 200: json('The OpenAPI 3.1 document of every /api route.', api.OpenApiDocumentSchema) } },
    {
      method: 'post', path: '/api/login', summary: 'Trade the relay token for the page\'s cookie', tag: 'web page', auth: 'public',
      description: 'Sets the `askrelay_session` cookie (HttpOnly, SameSite=Strict) naming a login the relay keeps; the token itself is never stored in the browser. Only the relay\'s own page may log in: the request\'s `Origin` must be the relay\'s (403 `cross_origin` otherwise).',
      body: LoginSchema, example: { body: { token: 'your-relay-token' } }, ok: { 200: json('Logged in; the cookie is set.', api.OkSchema) }, errors: [...BODY, 'unauthorized', 'cross_origin'],
    },
    { method: 'post', path: '/api/logout', summary: 'End the page\'s login', tag: 'web page', auth: 'public', description: 'Like every change made with the cookie, from the relay\'s own origin only.', ok: { 200: json('Logged out; the cookie is cleared.', api.OkSchema) }, errors: ['cross_origin'] },
    {
      method: 'post', path: '/api/cards', summary: 'Ask a human (a card asked directly, as `askrelay ask` does)', tag: 'cards', auth: 'token',
      body: CardInputSchema, ok: { 201: card('The new card, pending.') }, errors: [...BODY, 'invalid_card'], example: { body: EXAMPLE_CARD },
    },
    {
      method: 'get', path: '/api/cards', summary: 'List cards (oldest first, 500 at most unless `limit` says)', tag: 'cards', auth: 'token',
      query: ListQuerySchema, ok: { 200: json('The cards the caller may see.', api.CardListSchema) }, errors: ['invalid_request'], example: { query: { status: 'pending' } },
    },
    { method: 'get', path: '/api/cards/{id}', summary: 'One card', tag: 'cards', auth: 'token', ok: { 200: card('The card.') }, errors: ['not_found'] },
    {
      method: 'post', path: '/api/cards/{id}/answer', summary: 'Answer a card (first answer wins)', tag: 'cards', auth: 'token',
      description: 'Every question of the card gets an entry; typed words go in `text`. The same answer again is 200 with the stored card. `late: true` answers a card that expired or was cancelled (stored as `lateAnswer`). Send an `Idempotency-Key` header to retry safely.',
      body: AnswerBodySchema, ok: { 200: card('The answered card.') }, errors: ANSWER, example: { body: EXAMPLE_ANSWER, headers: { 'idempotency-key': 'example-1' } },
    },
    {
      method: 'post', path: '/api/cards/{id}/reply', summary: 'Answer a card with what a person typed, read with the plain-text rules', tag: 'cards', auth: 'token',
      body: ReplyBodySchema, ok: { 200: card('The answered card.') }, errors: ANSWER, example: { body: { text: '1' } },
    },
    { method: 'post', path: '/api/cards/{id}/skip', summary: 'Decline to answer (the agent is told)', tag: 'cards', auth: 'token', ok: { 200: card('The skipped card.') }, errors: ['not_found', 'already_answered', 'card_closed', 'agents_not_allowed', 'own_session', 'human_only', 'operator_only'] },
    {
      method: 'get', path: '/api/cards/{id}/wait', summary: 'Long poll: the card once it is no longer pending', tag: 'cards', auth: 'token',
      query: WaitQuerySchema, ok: { 200: card('The card, closed (or with its late answer).'), 204: { description: '`timeout` seconds passed first (default 30).' } },
      errors: ['invalid_request', 'not_found', 'too_many_connections'], example: { query: { timeout: '0' } },
    },
    {
      method: 'post', path: '/api/sessions', summary: 'Start an agent session on a provider', tag: 'sessions', auth: 'operator',
      body: startSession, ok: { 201: session('The session, starting.') }, errors: [...BODY, 'human_only', 'invalid_engine'],
      example: { body: { provider: 'claude', engine: 'messages', prompt: 'Ask me which database to use.' } },
    },
    { method: 'get', path: '/api/sessions', summary: 'List sessions (without transcripts)', tag: 'sessions', auth: 'token', ok: { 200: json('The sessions the caller may see.', api.SessionListSchema) } },
    { method: 'get', path: '/api/sessions/{id}', summary: 'One session with its transcript', tag: 'sessions', auth: 'token', ok: { 200: session('The session.') }, errors: ['not_found'] },
    {
      method: 'patch', path: '/api/sessions/{id}', summary: 'Let other sessions\' agents answer this session\'s cards, or not', tag: 'sessions', auth: 'operator',
      body: SessionPatchSchema, ok: { 200: session('The session.') }, errors: [...BODY, 'human_only', 'not_found'], example: { body: { agentsMayAnswer: false } },
    },
    {
      method: 'post', path: '/api/sessions/{id}/messages', summary: 'Send the session\'s agent the next message', tag: 'sessions', auth: 'operator',
      body: SessionMessageSchema, example: { body: { text: 'Go on with PostgreSQL.' } }, ok: { 200: session('The session.') }, errors: [...BODY, 'human_only', 'not_found', 'session_busy', 'session_closed'],
    },
    { method: 'delete', path: '/api/sessions/{id}', summary: 'Stop a session (its pending cards are cancelled)', tag: 'sessions', auth: 'operator', ok: { 200: session('The stopped session.') }, errors: ['human_only', 'not_found'] },
    { method: 'get', path: '/api/me', summary: 'Who the request is signed in as: the operator, a person, or a session\'s agent', tag: 'people', auth: 'token', ok: { 200: json('The caller.', api.MeSchema) } },
    { method: 'get', path: '/api/users', summary: 'The relay\'s people (docs/routing.md)', tag: 'people', auth: 'operator', ok: { 200: json('The people, by name.', api.UserListSchema) } },
    {
      method: 'post', path: '/api/users', summary: 'Make a person; the answer holds their personal token, shown this once', tag: 'people', auth: 'operator',
      body: NewUserBodySchema, ok: { 201: json('The person and their token (only its hash is kept).', api.NewUserSchema) }, errors: [...BODY, 'already_exists'], example: { body: { name: 'ada' } },
    },
    {
      method: 'post', path: '/api/users/{name}/links', summary: 'Link a chat user to a person: their taps and replies are recorded as the person', tag: 'people', auth: 'operator',
      body: NewLinkSchema, ok: { 200: json('The person with their links.', api.PersonSchema) }, errors: [...BODY, 'not_found'], example: { body: { link: 'telegram:42' } },
    },
    { method: 'delete', path: '/api/users/{name}/links/{link}', summary: 'Unlink a chat user', tag: 'people', auth: 'operator', ok: { 200: json('Unlinked.', api.UnlinkedSchema) }, errors: ['not_found'] },
    { method: 'delete', path: '/api/users/{name}', summary: 'Remove a person; their token stops working at once', tag: 'people', auth: 'operator', ok: { 200: json('Removed.', api.UserRemovedSchema) }, errors: ['not_found'] },
    { method: 'get', path: '/api/routes', summary: 'The routes: rules that send each card to the right people and chats (docs/routing.md)', tag: 'people', auth: 'operator', ok: { 200: json('The routes, in order (the first match wins).', RoutesDocumentSchema) } },
    {
      method: 'put', path: '/api/routes', summary: 'Replace the routes, on every node; a mistake names its rule and field and changes nothing', tag: 'people', auth: 'operator',
      body: RoutesDocumentSchema, ok: { 200: json('The routes now in force.', RoutesDocumentSchema) }, errors: [...BODY, 'store_unavailable'],
      example: { body: { routes: [{ name: 'approvals', match: { kind: 'approval' }, to: ['everyone'], escalate: [{ after: '15m', to: ['telegram'] }] }] } },
    },
    { method: 'get', path: '/api/providers', summary: 'The providers sessions run on, their engines and variables', tag: 'sessions', auth: 'token', ok: { 200: json('The providers.', api.ProviderListSchema) } },
    {
      method: 'get', path: '/api/audit', summary: 'The audit log, oldest first, a page at a time', tag: 'audit', auth: 'operator',
      query: AuditPageQuerySchema, ok: { 200: json('A page of entries.', api.AuditPageSchema) }, errors: ['human_only', 'invalid_request'], example: { query: { limit: '10' } },
    },
    { method: 'get', path: '/api/audit/head', summary: 'The last entry\'s seq and hash: the head to pin elsewhere', tag: 'audit', auth: 'human', ok: { 200: json('The head.', api.AuditHeadSchema) }, errors: ['human_only'] },
    {
      method: 'get', path: '/api/audit/verify', summary: 'Check the hash chain (and that a head pinned earlier is still in it)', tag: 'audit', auth: 'operator',
      query: z.object({ head: z.string().optional().describe('SEQ:HASH as GET /api/audit/head gave it') }), ok: { 200: json('What the check found.', api.AuditCheckSchema) }, errors: ['human_only', 'invalid_request'],
    },
    { method: 'get', path: '/api/nodes', summary: 'The nodes on this relay\'s store: alive, what each holds', tag: 'relay', auth: 'operator', ok: { 200: json('The nodes.', api.NodeListSchema) }, errors: ['human_only'] },
    { method: 'get', path: '/api/channels', summary: 'The chat channels switched on and their outboxes', tag: 'relay', auth: 'operator', ok: { 200: json('The channels.', api.ChannelListSchema) }, errors: ['human_only'] },
    { method: 'get', path: '/api/push/key', summary: 'The VAPID public key (the page\'s applicationServerKey)', tag: 'push', auth: 'human', ok: { 200: json('The key.', api.PushKeySchema) }, errors: ['human_only'] },
    {
      method: 'post', path: '/api/push/subscriptions', summary: 'Store a browser\'s push subscription', tag: 'push', auth: 'human',
      body: PushSubscriptionSchema, ok: { 200: json('Known already.', api.PushAddedSchema), 201: json('Stored.', api.PushAddedSchema) }, errors: [...BODY, 'human_only', 'invalid_subscription', 'too_many_subscriptions'],
      example: { body: { endpoint: 'https://push.example.net/send/example-1', keys: { p256dh: 'BNcRdreALRFXTkOOUHK1EtK2wtaz5Ry4YfYCA_0QTpQtUbVlUls0VJXg7A8u-Ts1XbjhazAkj7I99e8QcYP7DkM', auth: 'tBHItJI5svbpez7KI4CCXg' } } },
    },
    {
      method: 'delete', path: '/api/push/subscriptions', summary: 'Remove a browser\'s push subscription', tag: 'push', auth: 'human',
      body: EndpointSchema, ok: { 200: json('Removed.', api.PushRemovedSchema) }, errors: [...BODY, 'human_only', 'invalid_subscription', 'not_found'],
      example: { body: { endpoint: 'https://push.example.net/send/example-1' } },
    },
    {
      method: 'get', path: '/api/events', summary: 'Server-Sent Events: card.created, card.updated, card.delivery, card.late, session.updated', tag: 'events', auth: 'token',
      description: 'Each event\'s `data` is the card or session as JSON. Browsers authenticate with the cookie from POST /api/login. A stream the relay ends (a lost database connection) is reconnected by the client.',
      ok: { 200: { description: 'The event stream.', contentType: 'text/event-stream', schema: z.string() } }, errors: ['too_many_connections'],
    },
  ];
}
