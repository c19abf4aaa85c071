import { z } from 'zod';
import type { Card } from '../../cards/model.js';
import { sendErrorFor, type MessageRef } from '../channel.js';
import { closedOf, postOf, type MattermostClosePatch, type MattermostNewPost, type PostSettings } from './message.js';

// Mattermost's REST API v4 through fetch, with the bot's personal access token. Every
// failure becomes a ChannelSendError the outbox understands; nothing here retries (the
// durable outbox and the polling loop do).

/** A request Mattermost has not answered in this long is an outage. */
export const REQUEST_MS = 20_000;

const PostSchema = z
  .object({
    id: z.string(),
    create_at: z.number(),
    update_at: z.number().optional(),
    delete_at: z.number().optional(),
    user_id: z.string(),
    channel_id: z.string(),
    root_id: z.string().optional(),
    type: z.string().optional(),
    message: z.string().optional(),
  })
  .passthrough();
export type PostObject = z.infer<typeof PostSchema>;

/** What `GET /channels/{id}/posts?since=` answers: `order` lists the posts changed since then. */
const PostListSchema = z.object({ order: z.array(z.string()), posts: z.record(z.string(), PostSchema) }).passthrough();

const UserSchema = z.object({ id: z.string(), username: z.string().optional() }).passthrough();

export class MattermostApi {
  private readonly base: string;

  constructor(
    url: string,
    private readonly token: string,
    private readonly timeoutMs = REQUEST_MS,
  ) {
    this.base = `${url.replace(/\/+$/, '')}/api/v4`;
  }

  me() {
    return this.request('GET', '/users/me', undefined, UserSchema);
  }

  createPost(post: MattermostNewPost) {
    return this.request('POST', '/posts', post, PostSchema);
  }

  patchPost(id: string, patch: MattermostClosePatch) {
    return this.request('PUT', `/posts/${encodeURIComponent(id)}/patch`, patch, PostSchema);
  }

  /** Posts created or changed after `since` (ms), with the roots of replies among them. */
  postsSince(channel: string, since: number) {
    return this.request('GET', `/channels/${encodeURIComponent(channel)}/posts?since=${since}`, undefined, PostListSchema);
  }

  /** A post only `user` sees (needs the create_post_ephemeral permission). */
  ephemeral(user: string, post: { channel_id: string; message: string; root_id?: string }) {
    return this.request('POST', '/posts/ephemeral', { user_id: user, post }, z.unknown());
  }

  private async request<T>(method: string, path: string, body: unknown, schema: z.ZodType<T>): Promise<T> {
    const what = `${method} ${path.split('?')[0]}`;
    let response: Response;
    try {
      response = await fetch(this.base + path, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          accept: 'application/json',
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      const reason = (err as Error).name === 'TimeoutError' ? `no answer in ${this.timeoutMs / 1000} s` : causeOf(err);
      throw sendErrorFor(undefined, `${what}: cannot reach Mattermost (${reason})`);
    }
    const text = await response.text().catch(() => '');
    if (!response.ok) {
      throw sendErrorFor(response.status, `${what}: ${response.status} ${describe(text)}`, retryAfterMs(response.headers));
    }
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      throw sendErrorFor(502, `${what}: the answer is not JSON`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw sendErrorFor(502, `${what}: unexpected answer (${parsed.error.issues[0]?.message ?? 'invalid'})`);
    return parsed.data;
  }
}

export async function postCard(api: MattermostApi, settings: PostSettings, card: Card): Promise<MessageRef> {
  const post = await api.createPost(postOf(card, settings));
  return { chat: post.channel_id, message: post.id };
}

export async function closeCard(api: MattermostApi, card: Card, ref: MessageRef): Promise<void> {
  await api.patchPost(ref.message, closedOf(card));
}

/**
 * Mattermost's rate limiter (throttled) sends `Retry-After` and `X-Ratelimit-Reset`, both in
 * whole seconds from now; the first says when this request may be tried again.
 */
function retryAfterMs(headers: Headers): number | undefined {
  for (const name of ['retry-after', 'x-ratelimit-reset']) {
    const seconds = Number(headers.get(name));
    if (headers.get(name) !== null && Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  }
  return undefined;
}

/** Mattermost's error `{id, message, status_code}` as one line, or the plain text (a 429 says "limit exceeded"). */
function describe(text: string): string {
  try {
    const error = JSON.parse(text) as { id?: unknown; message?: unknown };
    if (typeof error.message === 'string') return typeof error.id === 'string' ? `${error.message} (${error.id})` : error.message;
  } catch {
    // not JSON
  }
  return text.trim().slice(0, 200) || 'no details';
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}
