import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listen, readRequest, type LoggedRequest } from './fake-http.js';

// A local Mattermost server, as far as askrelay talks to it: REST API v4 with a bot's
// personal access token (POST /posts, PUT /posts/{id}/patch, GET /channels/{id}/posts?since=,
// POST /posts/ephemeral, GET /users/me), with Mattermost's post objects, its error bodies
// {id, message, detailed_error, request_id, status_code} and its rate limiter's 429
// (text "limit exceeded", X-Ratelimit-* and Retry-After in whole seconds, as the server's
// throttled-based limiter writes them). It also plays the Mattermost server's part in a button
// click: it POSTs the button's stored integration context to the integration URL
// (PostActionIntegrationRequest) and applies the answer (update, ephemeral_text).
// Sources: https://developers.mattermost.com/api-documentation/ (CreatePost, PatchPost,
// GetPostsForChannel, CreatePostEphemeral; the AppError schema), Mattermost's server source
// (server/public/model/post.go: PostMessageMaxRunesV2 = 16383 and the message_length error;
// server/channels/web/handlers.go: detailed_error is wiped unless developer mode is on),
// https://developers.mattermost.com/integrate/plugins/interactive-messages/ (button clicks).

export interface FakePost {
  id: string;
  create_at: number;
  update_at: number;
  edit_at: number;
  delete_at: number;
  is_pinned: boolean;
  user_id: string;
  channel_id: string;
  root_id: string;
  original_id: string;
  message: string;
  type: string;
  props: Record<string, any>;
  hashtags: string;
  pending_post_id: string;
  reply_count: number;
  metadata: Record<string, unknown>;
}

export interface StoredPost {
  post: FakePost;
  /** Earlier versions, oldest first (one entry per edit). */
  history: { message: string; props: Record<string, any> }[];
}

export interface Ephemeral {
  user_id: string;
  channel_id: string;
  root_id: string;
  message: string;
  /** 'api': POST /posts/ephemeral; 'action': an integration's ephemeral_text after a click. */
  via: 'api' | 'action';
}

export interface ClickResult {
  /** What the Mattermost server answers the clicking client (200, or its error status). */
  status: number;
  /** What the integration (the relay) answered the server, when it was reached. */
  integration?: { status: number; body: any };
}

export interface MattermostFake {
  url: string;
  token: string;
  botId: string;
  channelId: string;
  /** Every post made, in order (card posts, replies), with its edit history. */
  messages: StoredPost[];
  ephemerals: Ephemeral[];
  requests: LoggedRequest[];
  /**
   * The next `n` API calls answer 429, asking for `seconds` of patience; `only` ("POST /api/v4/posts")
   * limits that to one endpoint, so a test's polling does not use up the 429 meant for a post.
   */
  rateLimitNext(seconds: number, n?: number, only?: string): void;
  /** true: 503 for everything; 'refuse': connections are dropped; 'hang': requests are never answered. */
  setDown(down: boolean | 'refuse' | 'hang'): void;
  /** POST /posts/ephemeral answers 403 (a bot without create_post_ephemeral). */
  forbidEphemeral(forbid: boolean): void;
  /** The bot's posts in the channel (root posts), in order. */
  cardPosts(): StoredPost[];
  /** A person's new post in the channel (not in a thread). */
  say(input: { user: string; message: string }): FakePost;
  /** A person's reply in the thread of `root`, as if typed in Mattermost. */
  reply(input: { user: string; root: string; message: string }): FakePost;
  /** A person clicks a button of a post (by option index or action id), as the Mattermost server handles it. */
  click(input: { post: string; user: string; option?: number; actionId?: string }): Promise<ClickResult>;
  close(): Promise<void>;
}

export interface FakeOptions {
  token?: string;
  channelId?: string;
  /** Further channels the bot is a member of (a route's, docs/routing.md). */
  otherChannels?: string[];
  botId?: string;
  /** The server's clock for create_at/update_at (a test's fake clock). */
  now?: () => number;
  /** Known user ids → usernames (user_name in click requests). */
  users?: Record<string, string>;
}

/** A post's message, in runes (code points): PostMessageMaxRunesV2 in server/public/model/post.go. */
export const MESSAGE_MAX_RUNES = 16_383;
const TOO_LONG = ['model.post.is_valid.message_length.app_error', 'Post Message property is longer than the maximum permitted length.'] as const;
const VERSION = '10.5.0.13192.9f3e1c0a.true';
const ID_ALPHABET = 'ybndrfg8ejkmcpqxot1uwisza345h769';

/** A Mattermost id: 26 characters of its base32 alphabet. */
export function newId(): string {
  return [...randomBytes(26)].map((b) => ID_ALPHABET[b % 32]).join('');
}

export async function startMattermostApi(options: FakeOptions = {}): Promise<MattermostFake> {
  const token = options.token ?? 'mm-bot-token';
  const botId = options.botId ?? newId();
  const channelId = options.channelId ?? newId();
  const memberOf = new Set([channelId, ...(options.otherChannels ?? [])]);
  const now = options.now ?? Date.now;
  const users: Record<string, string> = { [botId]: 'askrelay', ...options.users };
  const messages: StoredPost[] = [];
  const ephemerals: Ephemeral[] = [];
  const requests: LoggedRequest[] = [];
  const byId = new Map<string, StoredPost>();
  let limited = { left: 0, seconds: 0, only: undefined as string | undefined };
  let down: boolean | 'refuse' | 'hang' = false;
  let ephemeralForbidden = false;

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'Content-Type': 'application/json', 'X-Request-Id': newId(), 'X-Version-Id': VERSION });
    res.end(JSON.stringify(body));
  };
  // A production server (developer mode off) sends detailed_error empty.
  const fail = (res: ServerResponse, status: number, id: string, message: string) =>
    send(res, status, { id, message, detailed_error: '', request_id: newId(), status_code: status });

  const makePost = (fields: Partial<FakePost> & Pick<FakePost, 'user_id' | 'channel_id' | 'message'>): StoredPost => {
    const at = now();
    const post: FakePost = {
      id: newId(),
      create_at: at,
      update_at: at,
      edit_at: 0,
      delete_at: 0,
      is_pinned: false,
      root_id: '',
      original_id: '',
      type: '',
      props: {},
      hashtags: '',
      pending_post_id: '',
      reply_count: 0,
      metadata: {},
      ...fields,
    };
    const stored = { post, history: [] };
    messages.push(stored);
    byId.set(post.id, stored);
    if (post.root_id) byId.get(post.root_id)!.post.reply_count++;
    return stored;
  };

  const edit = (stored: StoredPost, message: string | undefined, props: Record<string, any> | undefined) => {
    stored.history.push({ message: stored.post.message, props: stored.post.props });
    const at = now();
    stored.post = { ...stored.post, ...(message !== undefined ? { message } : {}), ...(props !== undefined ? { props } : {}), edit_at: at, update_at: at };
  };

  /** The post as clients get it: the actions' integrations (URL, context) stay on the server. */
  const forClient = (post: FakePost): FakePost => {
    const attachments = post.props?.attachments;
    if (!Array.isArray(attachments)) return post;
    return {
      ...post,
      props: { ...post.props, attachments: attachments.map((a: any) => ({ ...a, ...(a.actions ? { actions: a.actions.map(({ integration: _, ...rest }: any) => rest) } : {}) })) },
    };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const { entry, url, body, bodyIsJson } = await readRequest(req);
    requests.push(entry);
    if (down === 'refuse') return void req.socket.destroy();
    if (down === 'hang') return;
    if (down) {
      res.writeHead(503, { 'Content-Type': 'text/plain' });
      return void res.end('Service Unavailable');
    }
    // The rate limiter wraps the whole API, before authentication.
    if (limited.left > 0 && (!limited.only || limited.only === `${req.method} ${url.pathname}`)) {
      limited.left--;
      res.writeHead(429, {
        'Content-Type': 'text/plain; charset=utf-8',
        'X-Content-Type-Options': 'nosniff',
        'X-Ratelimit-Limit': '101',
        'X-Ratelimit-Remaining': '0',
        'X-Ratelimit-Reset': String(limited.seconds),
        'Retry-After': String(limited.seconds),
      });
      return void res.end('limit exceeded\n');
    }
    const auth = /^(?:bearer|token)\s+(\S+)$/i.exec(String(req.headers.authorization ?? ''));
    if (auth?.[1] !== token) {
      return fail(res, 401, 'api.context.session_expired.app_error', 'Invalid or expired session, please login again.');
    }
    const path = url.pathname;
    const method = req.method;
    let match: RegExpExecArray | null;

    if (method === 'GET' && path === '/api/v4/users/me') {
      return send(res, 200, { id: botId, username: users[botId], is_bot: true, roles: 'system_user', create_at: 0, update_at: 0, delete_at: 0 });
    }
    if (method === 'POST' && path === '/api/v4/posts') {
      if (!bodyIsJson || typeof body?.channel_id !== 'string') return fail(res, 400, 'api.context.invalid_body_param.app_error', 'Invalid or missing post in request body.');
      if (!memberOf.has(body.channel_id)) return fail(res, 403, 'api.context.permissions.app_error', 'You do not have the appropriate permissions.');
      const message = String(body.message ?? '');
      if ([...message].length > MESSAGE_MAX_RUNES) return fail(res, 400, ...TOO_LONG);
      const problem = actionProblem(body.props);
      if (problem) return fail(res, 400, 'api.post.create_post.attachment_actions.app_error', 'Invalid post action.');
      const stored = makePost({ user_id: botId, channel_id: body.channel_id, message, root_id: String(body.root_id ?? ''), props: withActionIds(body.props ?? {}) });
      return send(res, 201, forClient(stored.post));
    }
    if (method === 'PUT' && (match = /^\/api\/v4\/posts\/([^/]+)\/patch$/.exec(path))) {
      const stored = byId.get(match[1]);
      if (!stored || stored.post.delete_at) return fail(res, 404, 'app.post.get.app_error', 'Unable to get the post.');
      if (stored.post.user_id !== botId) return fail(res, 403, 'api.context.permissions.app_error', 'You do not have the appropriate permissions.');
      if (!bodyIsJson) return fail(res, 400, 'api.context.invalid_body_param.app_error', 'Invalid or missing post in request body.');
      if (body.message !== undefined && [...String(body.message)].length > MESSAGE_MAX_RUNES) {
        return fail(res, 400, ...TOO_LONG);
      }
      edit(stored, body.message === undefined ? undefined : String(body.message), body.props === undefined ? undefined : withActionIds(body.props));
      return send(res, 200, forClient(stored.post));
    }
    if (method === 'GET' && (match = /^\/api\/v4\/channels\/([^/]+)\/posts$/.exec(path))) {
      if (!memberOf.has(match[1])) return fail(res, 403, 'api.context.permissions.app_error', 'You do not have the appropriate permissions.');
      const since = Number(url.searchParams.get('since') ?? 0);
      if (!Number.isInteger(since)) return fail(res, 400, 'api.context.invalid_url_param.app_error', 'Invalid or missing since parameter in request URL.');
      return send(res, 200, postsSince(since, match[1]));
    }
    if (method === 'POST' && path === '/api/v4/posts/ephemeral') {
      if (!bodyIsJson) return fail(res, 400, 'api.context.invalid_body_param.app_error', 'Invalid or missing body in request body.');
      if (!body.user_id) return fail(res, 400, 'api.context.invalid_body_param.app_error', 'Invalid or missing user_id in request body.');
      if (!body.post) return fail(res, 400, 'api.context.invalid_body_param.app_error', 'Invalid or missing post in request body.');
      if (ephemeralForbidden) return fail(res, 403, 'api.context.permissions.app_error', 'You do not have the appropriate permissions.');
      const at = now();
      const post = { id: newId(), create_at: at, update_at: at, edit_at: 0, delete_at: 0, user_id: botId, channel_id: String(body.post.channel_id ?? ''), root_id: String(body.post.root_id ?? ''), message: String(body.post.message ?? ''), type: 'system_ephemeral', props: {} };
      ephemerals.push({ user_id: String(body.user_id), channel_id: post.channel_id, root_id: post.root_id, message: post.message, via: 'api' });
      return send(res, 201, post);
    }
    return fail(res, 404, 'api.context.404.app_error', 'Sorry, we could not find the page.');
  };

  /** GetPostsSince: posts updated after `since` in `order` (newest first), the roots of replies among them in `posts` too. */
  const postsSince = (since: number, channel: string) => {
    const changed = messages.map((m) => m.post).filter((p) => p.update_at > since && p.channel_id === channel).sort((a, b) => b.create_at - a.create_at);
    const posts: Record<string, FakePost> = {};
    for (const p of changed) {
      posts[p.id] = forClient(p);
      const root = p.root_id ? byId.get(p.root_id)?.post : undefined;
      if (root) posts[root.id] = forClient(root);
    }
    return { order: changed.map((p) => p.id), posts, next_post_id: '', prev_post_id: '', has_next: false, first_inaccessible_post_time: 0 };
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) fail(res, 500, 'api.context.unknown.app_error', String(err));
    });
  });
  const { base, close } = await listen(server);

  return {
    url: base,
    token,
    botId,
    channelId,
    messages,
    ephemerals,
    requests,
    rateLimitNext(seconds, n = 1, only) {
      limited = { left: n, seconds, only };
    },
    setDown(value) {
      down = value;
    },
    forbidEphemeral(forbid) {
      ephemeralForbidden = forbid;
    },
    cardPosts: () => messages.filter((m) => m.post.user_id === botId && !m.post.root_id),
    say: ({ user, message }) => makePost({ user_id: user, channel_id: channelId, message }).post,
    reply({ user, root, message }) {
      const parent = byId.get(root);
      if (!parent) throw new Error(`no post ${root}`);
      return makePost({ user_id: user, channel_id: parent.post.channel_id, message, root_id: parent.post.root_id || parent.post.id }).post;
    },
    async click({ post: postId, user, option, actionId }) {
      const id = actionId ?? `option${option}`;
      // The client's call: POST /api/v4/posts/{post_id}/actions/{action_id:[A-Za-z0-9]+}.
      if (!/^[A-Za-z0-9]+$/.test(id)) return { status: 404 };
      const stored = byId.get(postId);
      const action = (stored?.post.props.attachments ?? []).flatMap((a: any) => a.actions ?? []).find((a: any) => a.id === id);
      if (!stored || !action?.integration?.url) return { status: 404 };
      const request = {
        user_id: user,
        user_name: users[user] ?? user,
        channel_id: stored.post.channel_id,
        channel_name: 'askrelay',
        team_id: 'teamid00000000000000000000',
        team_domain: 'team',
        post_id: stored.post.id,
        trigger_id: Buffer.from(`${newId()}:${user}:${now()}:sig`).toString('base64'),
        type: action.type ?? 'button',
        data_source: '',
        ...(action.integration.context ? { context: action.integration.context } : {}),
      };
      let response: Response;
      try {
        response = await fetch(action.integration.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
          body: JSON.stringify(request),
          signal: AbortSignal.timeout(30_000),
        });
      } catch {
        return { status: 400 };
      }
      const text = await response.text();
      let answer: any;
      try {
        answer = text ? JSON.parse(text) : {};
      } catch {
        return { status: 400, integration: { status: response.status, body: text } };
      }
      if (response.status !== 200) return { status: 400, integration: { status: response.status, body: answer } };
      if (answer.update) edit(stored, answer.update.message, answer.update.props ?? stored.post.props);
      if (answer.ephemeral_text) {
        ephemerals.push({ user_id: user, channel_id: stored.post.channel_id, root_id: stored.post.root_id || stored.post.id, message: answer.ephemeral_text, via: 'action' });
      }
      return { status: 200, integration: { status: response.status, body: answer } };
    },
    close,
  };
}

/** PostAction.IsValid for the attachments' actions: a name, a known type, an integration URL. */
function actionProblem(props: any): string | undefined {
  for (const attachment of props?.attachments ?? []) {
    for (const action of attachment?.actions ?? []) {
      if (!action.name) return 'action must have a name';
      if (!['button', 'select'].includes(action.type)) return "invalid action type: must be 'button' or 'select'";
      if (!action.integration?.url) return 'action must have integration settings';
      if (!/^https?:\/\//.test(action.integration.url)) return 'action must have an valid integration URL';
    }
  }
  return undefined;
}

/** The server gives actions without an id one of its own. */
function withActionIds(props: any): Record<string, any> {
  if (!Array.isArray(props?.attachments)) return props ?? {};
  return { ...props, attachments: props.attachments.map((a: any) => ({ ...a, ...(a.actions ? { actions: a.actions.map((x: any) => ({ ...x, id: x.id || newId() })) } : {}) })) };
}
