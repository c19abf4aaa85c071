import { createServer, type ServerResponse } from 'node:http';
import { listen, readRequest, type LoggedRequest } from './fake-http.js';

// A local Telegram Bot API (https://core.telegram.org/bots/api) for the methods the relay
// uses, and getMe (askrelay doctor's harmless call): POST /bot<token>/<method> with a JSON
// body, answered {ok:true, result} or {ok:false, error_code, description, parameters?}. getUpdates long-polls like Telegram's:
// it returns at once when updates are waiting past `offset`, else holds up to `timeout`
// seconds. Tests play the person: tap() and reply() queue the updates Telegram would send.
// Sources: https://core.telegram.org/bots/api#making-requests (the answer object, 401
// Unauthorized, 429 with parameters.retry_after), https://core.telegram.org/bots/api#sendmessage,
// https://core.telegram.org/bots/api#inlinekeyboardbutton, https://core.telegram.org/bots/api#answercallbackquery.
// The relay long-polls getUpdates, so no webhook (and no X-Telegram-Bot-Api-Secret-Token) is modelled.

/** A message's text: 1-4096 characters after entities parsing (https://core.telegram.org/bots/api#sendmessage). */
export const MESSAGE_MAX_CHARS = 4096;
/** A button's callback_data: 1-64 bytes (https://core.telegram.org/bots/api#inlinekeyboardbutton). */
export const CALLBACK_DATA_MAX_BYTES = 64;
/** A callback query's notification text: 0-200 characters (https://core.telegram.org/bots/api#answercallbackquery). */
export const CALLBACK_TEXT_MAX_CHARS = 200;

export interface FakeUser {
  id: number;
  first_name: string;
  is_bot?: boolean;
}

export interface FakeMessage {
  message_id: number;
  chat: { id: number; type: 'group' };
  date: number;
  from: FakeUser;
  /** What Telegram shows: the HTML parsed to plain text. */
  text: string;
  /** The HTML as sent (our own bookkeeping). */
  html: string;
  reply_markup?: any;
  reply_to_message?: FakeMessage;
  edit_date?: number;
  /** Every edit, in order (our own bookkeeping). */
  edits: { html: string; reply_markup?: any }[];
}

const BOT: FakeUser = { id: 7000, first_name: 'askrelay', is_bot: true };
/** getMe's User: the bot's own fields beside the ones every User has (https://core.telegram.org/bots/api#getme, #user). */
const BOT_ME = { ...BOT, username: 'askrelay_bot', can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false };

/** `chat`: the chat the bot posts in; `others`: further chats it is a member of (a route's, docs/routing.md). */
export async function startFakeTelegram(options: { token: string; chat: number; others?: number[] }) {
  const chats = new Set([options.chat, ...(options.others ?? [])]);
  const messages = new Map<number, FakeMessage>();
  const requests: (LoggedRequest & { method: string })[] = [];
  const callbackAnswers: { callback_query_id: string; text?: string; show_alert?: boolean }[] = [];
  const updates: any[] = [];
  const polls = new Set<() => void>();
  let nextMessage = 100;
  let nextUpdate = 1;
  let nextQuery = 1;
  let limited: { seconds: number; left: number; methods?: string[] } | undefined;
  let down: false | 'error' | 'refuse' = false;

  const reply = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const fail = (res: ServerResponse, code: number, description: string, parameters?: unknown) =>
    reply(res, code, { ok: false, error_code: code, description, ...(parameters ? { parameters } : {}) });

  const server = createServer(async (req, res) => {
    if (down === 'refuse') return void req.socket.destroy();
    const { entry, body } = await readRequest(req);
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(entry.path);
    if (!match) return fail(res, 404, 'Not Found');
    const [, token, method] = match;
    requests.push({ ...entry, method });
    if (down === 'error') {
      return void res.writeHead(502, { 'content-type': 'text/html' }).end('<html><body><h1>502 Bad Gateway</h1></body></html>');
    }
    if (token !== options.token) return fail(res, 401, 'Unauthorized');
    if (limited && limited.left > 0 && (!limited.methods || limited.methods.includes(method))) {
      limited.left--;
      return fail(res, 429, `Too Many Requests: retry after ${limited.seconds}`, { retry_after: limited.seconds });
    }
    const args = (body ?? {}) as Record<string, any>;
    switch (method) {
      case 'getMe':
        return reply(res, 200, { ok: true, result: BOT_ME });
      case 'getUpdates':
        return getUpdates(res, args);
      case 'sendMessage': {
        if (!chats.has(Number(args.chat_id))) return fail(res, 400, 'Bad Request: chat not found');
        const problem = messageProblem(args);
        if (problem) return fail(res, 400, problem);
        const replyTo = args.reply_parameters?.message_id ? messages.get(args.reply_parameters.message_id) : undefined;
        const message: FakeMessage = {
          message_id: nextMessage++,
          chat: { id: Number(args.chat_id), type: 'group' },
          date: Math.floor(Date.now() / 1000),
          from: BOT,
          text: plain(args.text),
          html: args.text,
          ...(args.reply_markup ? { reply_markup: args.reply_markup } : {}),
          ...(replyTo ? { reply_to_message: replyTo } : {}),
          edits: [],
        };
        messages.set(message.message_id, message);
        const { html, edits, ...wire } = message;
        return reply(res, 200, { ok: true, result: wire });
      }
      case 'editMessageText': {
        const message = messages.get(Number(args.message_id));
        if (!message || Number(args.chat_id) !== message.chat.id) return fail(res, 400, 'Bad Request: message to edit not found');
        const problem = messageProblem(args);
        if (problem) return fail(res, 400, problem);
        const markup = args.reply_markup ?? undefined;
        if (message.html === args.text && JSON.stringify(message.reply_markup) === JSON.stringify(markup)) {
          return fail(res, 400, 'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message');
        }
        Object.assign(message, { html: args.text, text: plain(args.text), reply_markup: markup, edit_date: Math.floor(Date.now() / 1000) });
        message.edits.push({ html: args.text, reply_markup: markup });
        const { html, edits, ...wire } = message;
        return reply(res, 200, { ok: true, result: wire });
      }
      case 'answerCallbackQuery':
        if (typeof args.text === 'string' && [...args.text].length > CALLBACK_TEXT_MAX_CHARS) return fail(res, 400, 'Bad Request: MESSAGE_TOO_LONG');
        callbackAnswers.push({ callback_query_id: args.callback_query_id, text: args.text, show_alert: args.show_alert });
        return reply(res, 200, { ok: true, result: true });
      default:
        return fail(res, 404, 'Not Found: method not found');
    }
  });

  function getUpdates(res: ServerResponse, args: Record<string, any>) {
    const offset = Number(args.offset ?? 0);
    // Confirming an offset forgets everything before it, like Telegram.
    while (updates.length && updates[0].update_id < offset) updates.shift();
    if (updates.length) return reply(res, 200, { ok: true, result: updates.slice(0, 100) });
    const done = () => {
      polls.delete(done);
      clearTimeout(timer);
      while (updates.length && updates[0].update_id < offset) updates.shift();
      if (!res.writableEnded) reply(res, 200, { ok: true, result: updates.slice(0, 100) });
    };
    const timer = setTimeout(done, Number(args.timeout ?? 0) * 1000);
    res.on('close', () => {
      polls.delete(done);
      clearTimeout(timer);
    });
    polls.add(done);
  }

  function push(update: Record<string, unknown>) {
    updates.push({ update_id: nextUpdate++, ...update });
    [...polls].forEach((wake) => wake());
  }

  const { base, close } = await listen(server);
  return {
    url: base,
    messages,
    requests,
    callbackAnswers,
    /** The bot's messages in the chat, oldest first. */
    get sent(): FakeMessage[] {
      return [...messages.values()].filter((m) => m.from.is_bot);
    },
    /** A person taps an inline button; returns the callback query id. */
    tap(from: FakeUser, messageId: number, data: string): string {
      const id = String(nextQuery++);
      const message = messages.get(messageId);
      push({ callback_query: { id, from, chat_instance: 'ci1', data, ...(message ? { message: strip(message) } : {}) } });
      return id;
    },
    /** A person writes in the chat (of `replyTo`, when it is a message of one), replying to `replyTo` (a message id). */
    reply(from: FakeUser, replyTo: number | undefined, text: string): number {
      const message: FakeMessage = {
        message_id: nextMessage++,
        chat: { id: (replyTo && messages.get(replyTo)?.chat.id) || options.chat, type: 'group' },
        date: Math.floor(Date.now() / 1000),
        from,
        text,
        html: text,
        ...(replyTo && messages.get(replyTo) ? { reply_to_message: messages.get(replyTo)! } : {}),
        edits: [],
      };
      messages.set(message.message_id, message);
      push({ message: strip(message) });
      return message.message_id;
    },
    /** The next `count` calls (of `methods`, default all but getUpdates) get 429 with retry_after. */
    rateLimitNext(seconds: number, count = 1, methods = ['sendMessage', 'editMessageText']) {
      limited = { seconds, left: count, methods };
    },
    /** 'error': 502 from a proxy; 'refuse': connections cut; false: up. */
    setDown(mode: false | 'error' | 'refuse') {
      down = mode;
    },
    /** Updates not yet confirmed by a getUpdates offset. */
    get unconfirmed() {
      return updates.length;
    },
    async close() {
      [...polls].forEach((wake) => wake());
      await close();
    },
  };
}

export type FakeTelegram = Awaited<ReturnType<typeof startFakeTelegram>>;

function strip(message: FakeMessage): Record<string, unknown> {
  const { html, edits, reply_to_message, ...wire } = message;
  return { ...wire, ...(reply_to_message ? { reply_to_message: strip(reply_to_message) } : {}) };
}

/** What Telegram refuses in a message's text and inline keyboard, in its words; undefined when fine. */
function messageProblem(args: Record<string, any>): string | undefined {
  const text = plain(args.text);
  if (!text.trim()) return 'Bad Request: message text is empty';
  // Characters (code points) of the parsed text, not UTF-16 units: 4,096 emoji were taken and
  // 4,097 refused by the real Bot API (measured in https://github.com/FerroxLabs/wayland/issues/934).
  if ([...text].length > MESSAGE_MAX_CHARS) return 'Bad Request: message is too long';
  for (const row of args.reply_markup?.inline_keyboard ?? []) {
    for (const button of row) {
      if (!('callback_data' in button)) continue;
      const bytes = Buffer.byteLength(String(button.callback_data));
      if (bytes < 1 || bytes > CALLBACK_DATA_MAX_BYTES) return 'Bad Request: BUTTON_DATA_INVALID';
    }
  }
  return undefined;
}

/** Telegram's view of an HTML message: tags gone, entities decoded. */
function plain(html: string): string {
  return String(html ?? '')
    .replace(/<[^>]+>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}
