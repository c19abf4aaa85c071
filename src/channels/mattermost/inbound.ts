import { Hono } from 'hono';
import { z } from 'zod';
import { readLimitedOr } from '../../server/http.js';
import type { ChannelContext, ChannelInbox } from '../channel.js';
import type { MattermostApi, PostObject } from './client.js';
import { verifyOption } from './message.js';

// What people do in Mattermost, back to the inbox.
// Button clicks: the Mattermost server POSTs the button's context to the relay (the
// integration URL); the context's HMAC proves the button is one of the relay's own, for that
// card and option, and not past its expiry. The clicker is the request's own `user_id`, which
// the Mattermost server fills in; nothing in the context is taken as a person. The answer to
// that request is what the clicker sees: nothing for an answer (the outbox edits the post),
// or an ephemeral line only they see for a refusal.
// Thread replies: Mattermost sends no event without a plugin or a websocket, so the relay
// polls the channel for new posts and takes the replies in a card post's thread.

/** What the Mattermost server sends to an integration URL (PostActionIntegrationRequest). */
const ActionRequestSchema = z
  .object({
    user_id: z.string().min(1),
    user_name: z.string().optional(),
    channel_id: z.string().optional(),
    post_id: z.string().optional(),
    type: z.string().optional(),
    context: z.record(z.string(), z.unknown()).optional(),
  })
  .passthrough();

const ContextSchema = z.object({ cardId: z.string().min(1), option: z.number().int().min(0), expires: z.number().int(), sig: z.string() });

/** A click request is a few hundred bytes (the context and the names of the clicker and channel). */
export const BODY_LIMIT = 64 * 1024;

/** The bookmark: the newest create_at taken and the posts taken at that millisecond. */
const CURSOR_KEY = 'replies-cursor';

const error = (code: string, message: string) => ({ error: { code, message } });

export interface ActionRouteOptions {
  secret: string;
  /** Milliseconds since the epoch (the relay's clock). */
  now: () => number;
}

export function actionRoutes(inbox: ChannelInbox, options: ActionRouteOptions): Hono {
  const app = new Hono();
  app.post('/actions', async (c) => {
    const raw = await readLimitedOr(c.req.raw, BODY_LIMIT, (err) => c.json(error(err.code, err.message), 413));
    if (!Buffer.isBuffer(raw)) return raw;
    const request = ActionRequestSchema.safeParse(parseJson(raw));
    if (!request.success) return c.json(error('invalid_request', 'Expected Mattermost\'s action request: a JSON object with "user_id" and "context".'), 400);
    const context = ContextSchema.safeParse(request.data.context);
    if (!context.success || !verifyOption(options.secret, context.data)) {
      return c.json(error('unauthorized', 'This button was not made by this relay (bad or missing signature).'), 401);
    }
    const { cardId, option, expires } = context.data;
    if (options.now() > expires) {
      return c.json(error('unauthorized', 'This button expired with its question; nothing changed.'), 401);
    }
    const outcome = await inbox.tap({ user: request.data.user_id, cardId, option });
    if (outcome.kind === 'answered' || outcome.kind === 'ignored') return c.json({});
    return c.json({ ephemeral_text: outcome.notice });
  });
  return app;
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** Takes typed answers: replies in the thread of a card's post, found by polling the channel. */
export class ThreadReplies {
  private timer: unknown;
  private stopped = false;
  private polling = false;
  private failing = false;
  private bot: string | undefined;
  /** The newest create_at taken, and the posts taken at exactly that millisecond. */
  private cursor = 0;
  private atCursor = new Set<string>();

  private readonly cursorKey: string;

  constructor(
    private readonly api: MattermostApi,
    private readonly channel: string,
    private readonly inbox: ChannelInbox,
    private readonly context: ChannelContext,
    private readonly pollMs: number,
    /** Another channel than the configured one (a route's): its bookmark is its own. */
    other = false,
  ) {
    this.cursorKey = other ? `${CURSOR_KEY}:${channel}` : CURSOR_KEY;
  }

  async start(): Promise<void> {
    // Where the last run stopped reading, so a reply written while the relay was down still
    // answers; on the very first start, from now (older replies answered nothing of ours).
    const saved = await this.inbox.recall(this.cursorKey);
    if (this.stopped) return;
    const bookmark = saved ? (JSON.parse(saved) as { cursor: number; atCursor: string[] }) : undefined;
    this.cursor = bookmark?.cursor ?? this.context.clock.now();
    this.atCursor = new Set(bookmark?.atCursor ?? []);
    this.arm();
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    this.context.clock.clearTimer(this.timer);
  }

  /** A poll every pollMs; one still running (a slow server) makes the next one wait its turn. */
  private arm(): void {
    this.timer = this.context.clock.setTimer(() => {
      if (this.stopped) return;
      this.arm();
      void this.tick();
    }, this.pollMs);
  }

  private async tick(): Promise<void> {
    if (this.polling || this.stopped) return;
    this.polling = true;
    try {
      await this.poll();
      if (this.failing) this.context.log('reading the channel works again');
      this.failing = false;
    } catch (err) {
      // One line per outage, not one per poll; the next interval simply tries again.
      if (!this.failing && !this.stopped) this.context.log(`cannot read the channel for replies (${(err as Error).message}); trying again every ${this.pollMs / 1000} s`);
      this.failing = true;
    } finally {
      this.polling = false;
    }
  }

  private async poll(): Promise<void> {
    if (this.bot === undefined) {
      // Once at start (again after a failure): the bot's own posts are never answers.
      const me = await this.api.me();
      this.bot = me.id;
    }
    // `since` takes posts updated after it; one ms earlier keeps a post made in the cursor's own ms.
    const list = await this.api.postsSince(this.channel, this.cursor - 1);
    if (this.stopped) return;
    const fresh = list.order
      .map((id) => list.posts[id])
      .filter((p): p is PostObject => p !== undefined && (p.create_at > this.cursor || (p.create_at === this.cursor && !this.atCursor.has(p.id))))
      .sort((a, b) => a.create_at - b.create_at);
    for (const post of fresh) {
      if (post.create_at > this.cursor) {
        this.cursor = post.create_at;
        this.atCursor = new Set();
      }
      this.atCursor.add(post.id);
      if (this.stopped) return;
      try {
        await this.take(post);
      } catch (err) {
        this.context.log(`reply ${post.id}: ${(err as Error).message}`);
      }
      if (this.stopped) return;
      await this.inbox.remember(this.cursorKey, JSON.stringify({ cursor: this.cursor, atCursor: [...this.atCursor] }));
    }
  }

  private async take(post: PostObject): Promise<void> {
    // Edits of older posts come back too (since is about updates); only new replies count.
    if (!post.root_id || post.delete_at || post.type || post.user_id === this.bot || post.channel_id !== this.channel) return;
    const cardId = await this.inbox.cardOfMessage(post.root_id);
    if (!cardId) return;
    const outcome = await this.inbox.reply({ user: post.user_id, cardId, text: post.message ?? '' });
    if (outcome.kind === 'answered' || outcome.kind === 'ignored') return;
    try {
      await this.api.ephemeral(post.user_id, { channel_id: this.channel, message: outcome.notice, root_id: post.root_id });
    } catch (err) {
      const hint = /\b403\b/.test((err as Error).message) ? ' (the bot needs the create_post_ephemeral permission: make it a system admin)' : '';
      this.context.log(`could not tell ${post.user_id} privately why their reply changed nothing: ${(err as Error).message}${hint}`);
    }
  }
}
