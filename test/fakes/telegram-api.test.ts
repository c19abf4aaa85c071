import { Api, GrammyError, HttpError } from 'grammy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../support/wait-until.js';
import { CALLBACK_DATA_MAX_BYTES, CALLBACK_TEXT_MAX_CHARS, MESSAGE_MAX_CHARS, startFakeTelegram, type FakeTelegram } from './telegram-api.js';

// The fake Telegram Bot API pinned to Telegram's documented wire format, driven by grammy's
// real Api client (as the product uses it) and raw HTTP where the status line matters.
// Sources: https://core.telegram.org/bots/api#making-requests, https://core.telegram.org/bots/api#sendmessage,
// https://core.telegram.org/bots/api#editmessagetext, https://core.telegram.org/bots/api#inlinekeyboardbutton,
// https://core.telegram.org/bots/api#answercallbackquery, https://core.telegram.org/bots/api#getupdates

const TOKEN = '123456:test-token';
const CHAT = -1001;
const ADA = { id: 42, first_name: 'Ada' };

let fake: FakeTelegram;
let api: Api;
beforeEach(async () => {
  fake = await startFakeTelegram({ token: TOKEN, chat: CHAT });
  api = new Api(TOKEN, { apiRoot: fake.url });
});
afterEach(() => fake.close());

async function failure(call: Promise<unknown>): Promise<any> {
  try {
    await call;
  } catch (err) {
    return err;
  }
  throw new Error('the call succeeded');
}

/** Telegram's description for a refused call (error_code 400 unless said). */
const refused = async (call: Promise<unknown>, code = 400) => {
  const err = await failure(call);
  expect(err).toBeInstanceOf(GrammyError);
  expect(err.error_code).toBe(code);
  return err.description as string;
};

const keyboard = (...data: string[]) => ({ inline_keyboard: data.map((d, i) => [{ text: `Option ${i}`, callback_data: d }]) });

describe('the fake Telegram Bot API, driven by grammy', () => {
  it('answers a wrong token with 401 {ok:false, error_code:401, description:"Unauthorized"}, and no token with 404', async () => {
    expect(await refused(new Api('123456:wrong', { apiRoot: fake.url }).sendMessage(CHAT, 'hi'), 401)).toBe('Unauthorized');
    const wrong = await fetch(`${fake.url}/bot123456:wrong/getMe`, { method: 'POST' });
    expect([wrong.status, await wrong.json()]).toEqual([401, { ok: false, error_code: 401, description: 'Unauthorized' }]);
    const none = await fetch(`${fake.url}/bot/getMe`, { method: 'POST' });
    expect([none.status, await none.json()]).toEqual([404, { ok: false, error_code: 404, description: 'Not Found' }]);
    expect(fake.sent).toHaveLength(0);
  });

  it('getMe answers the bot\'s own User (is_bot, username, the can_* fields), GET or POST', async () => {
    const me = await api.getMe();
    expect(me).toMatchObject({ id: 7000, is_bot: true, first_name: 'askrelay', username: 'askrelay_bot', can_join_groups: true });
    const viaGet = await fetch(`${fake.url}/bot${TOKEN}/getMe`);
    expect([viaGet.status, (await viaGet.json()).result.username]).toEqual([200, 'askrelay_bot']);
  });

  it('sendMessage answers the Message: ids, the chat, the bot as sender, the text after HTML parsing and the keyboard', async () => {
    const markup = keyboard('a:c1:0', 'a:c1:1');
    const sent = await api.sendMessage(CHAT, '<b>Which database?</b> PostgreSQL &amp; SQLite', { parse_mode: 'HTML', reply_markup: markup });
    expect(sent).toEqual({
      message_id: expect.any(Number),
      chat: { id: CHAT, type: 'group' },
      date: expect.any(Number),
      from: { id: 7000, first_name: 'askrelay', is_bot: true },
      text: 'Which database? PostgreSQL & SQLite',
      reply_markup: markup,
    });
    expect(Math.abs(sent.date - Date.now() / 1000)).toBeLessThan(5);
    const reply = await api.sendMessage(CHAT, 'Noted', { reply_parameters: { message_id: sent.message_id } });
    expect(reply.reply_to_message?.message_id).toBe(sent.message_id);
    expect(await refused(api.sendMessage(-2002, 'hi'))).toBe('Bad Request: chat not found');
  });

  it('editMessageText answers the edited Message with edit_date; the same content again is "not modified"; an unknown id is not found', async () => {
    const sent = await api.sendMessage(CHAT, 'open', { reply_markup: keyboard('a:c1:0') });
    const edited = await api.editMessageText(CHAT, sent.message_id, 'closed', { reply_markup: { inline_keyboard: [] } });
    expect(edited).toMatchObject({ message_id: sent.message_id, text: 'closed', edit_date: expect.any(Number), reply_markup: { inline_keyboard: [] } });
    expect(await refused(api.editMessageText(CHAT, sent.message_id, 'closed', { reply_markup: { inline_keyboard: [] } }))).toBe(
      'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message',
    );
    expect(await refused(api.editMessageText(CHAT, 9999, 'x'))).toBe('Bad Request: message to edit not found');
    expect(fake.messages.get(sent.message_id)!.edits).toEqual([{ html: 'closed', reply_markup: { inline_keyboard: [] } }]);
  });

  it('takes 4,096 characters after entities parsing and refuses more with "message is too long", also on an edit', async () => {
    expect(MESSAGE_MAX_CHARS).toBe(4096);
    // Tags and entities do not count, characters (not UTF-16 units) do.
    const sent = await api.sendMessage(CHAT, `<b>${'x'.repeat(4090)}</b>&lt;&gt;&amp;xxx`, { parse_mode: 'HTML' });
    expect([...sent.text!]).toHaveLength(4096);
    await api.sendMessage(CHAT, '😀'.repeat(4096));
    expect(await refused(api.sendMessage(CHAT, `<b>${'x'.repeat(4097)}</b>`, { parse_mode: 'HTML' }))).toBe('Bad Request: message is too long');
    expect(await refused(api.editMessageText(CHAT, sent.message_id, 'y'.repeat(4097)))).toBe('Bad Request: message is too long');
    expect(await refused(api.sendMessage(CHAT, ''))).toBe('Bad Request: message text is empty');
    expect(await refused(api.sendMessage(CHAT, '<b></b>', { parse_mode: 'HTML' }))).toBe('Bad Request: message text is empty');
    expect(fake.messages.get(sent.message_id)!.edits).toEqual([]);
    expect(fake.sent).toHaveLength(2);
  });

  it('takes callback_data of 1 to 64 bytes and refuses anything else with BUTTON_DATA_INVALID', async () => {
    expect(CALLBACK_DATA_MAX_BYTES).toBe(64);
    await api.sendMessage(CHAT, 'ok', { reply_markup: keyboard('d'.repeat(64)) });
    expect(await refused(api.sendMessage(CHAT, 'long', { reply_markup: keyboard('a', 'd'.repeat(65)) }))).toBe('Bad Request: BUTTON_DATA_INVALID');
    // Bytes, not characters: 22 euro signs are 66 bytes.
    expect(await refused(api.sendMessage(CHAT, 'wide', { reply_markup: keyboard('€'.repeat(22)) }))).toBe('Bad Request: BUTTON_DATA_INVALID');
    expect(await refused(api.sendMessage(CHAT, 'empty', { reply_markup: keyboard('') }))).toBe('Bad Request: BUTTON_DATA_INVALID');
    const [ok] = fake.sent;
    expect(await refused(api.editMessageText(CHAT, ok.message_id, 'edit', { reply_markup: keyboard('d'.repeat(65)) }))).toBe('Bad Request: BUTTON_DATA_INVALID');
    expect(fake.sent).toHaveLength(1);
  });

  it('answerCallbackQuery answers true and takes a notification of up to 200 characters; a longer one is MESSAGE_TOO_LONG', async () => {
    expect(CALLBACK_TEXT_MAX_CHARS).toBe(200);
    expect(await api.answerCallbackQuery('1', { text: 'n'.repeat(200), show_alert: true })).toBe(true);
    expect(await refused(api.answerCallbackQuery('2', { text: 'n'.repeat(201) }))).toBe('Bad Request: MESSAGE_TOO_LONG');
    expect(fake.callbackAnswers).toEqual([{ callback_query_id: '1', text: 'n'.repeat(200), show_alert: true }]);
  });

  it('answers a rate limit with 429 "Too Many Requests: retry after N" and parameters.retry_after; getUpdates is not limited', async () => {
    fake.rateLimitNext(5);
    expect(await api.getUpdates({ timeout: 0 })).toEqual([]);
    const err = await failure(api.sendMessage(CHAT, 'hi'));
    expect(err).toBeInstanceOf(GrammyError);
    expect([err.error_code, err.description, err.parameters]).toEqual([429, 'Too Many Requests: retry after 5', { retry_after: 5 }]);

    fake.rateLimitNext(2);
    const res = await fetch(`${fake.url}/bot${TOKEN}/sendMessage`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ chat_id: CHAT, text: 'hi' }) });
    expect([res.status, await res.json()]).toEqual([429, { ok: false, error_code: 429, description: 'Too Many Requests: retry after 2', parameters: { retry_after: 2 } }]);
    expect(fake.sent).toHaveLength(0);
    expect((await api.sendMessage(CHAT, 'hi')).text).toBe('hi');
  });

  it('getUpdates holds a long poll until an update comes, then answers it; an offset confirms and forgets it', async () => {
    const card = await api.sendMessage(CHAT, 'Which?', { reply_markup: keyboard('a:c1:0') });
    const poll = api.getUpdates({ timeout: 30 });
    await waitUntil(() => fake.requests.some((r) => r.method === 'getUpdates'), 'the long poll to reach the fake');
    const queryId = fake.tap(ADA, card.message_id, 'a:c1:0');
    const [update] = await poll;
    expect(update).toEqual({
      update_id: expect.any(Number),
      callback_query: { id: queryId, from: ADA, chat_instance: 'ci1', data: 'a:c1:0', message: expect.objectContaining({ message_id: card.message_id, text: 'Which?' }) },
    });
    expect((update.callback_query!.message as any).html).toBeUndefined();

    const replyId = fake.reply(ADA, card.message_id, '5432');
    const next = await api.getUpdates({ offset: update.update_id + 1, timeout: 0 });
    expect(next).toEqual([
      {
        update_id: update.update_id + 1,
        message: expect.objectContaining({ message_id: replyId, from: ADA, text: '5432', reply_to_message: expect.objectContaining({ message_id: card.message_id }) }),
      },
    ]);
    expect(await api.getUpdates({ offset: update.update_id + 2, timeout: 0 })).toEqual([]);
    expect(fake.unconfirmed).toBe(0);
  });

  it('an outage is a proxy’s 502 HTML page, then cut connections; grammy reports each', async () => {
    fake.setDown('error');
    expect(await failure(api.sendMessage(CHAT, 'hi'))).toBeInstanceOf(HttpError);
    fake.setDown('refuse');
    expect(await failure(api.sendMessage(CHAT, 'hi'))).toBeInstanceOf(HttpError);
    fake.setDown(false);
    expect((await api.sendMessage(CHAT, 'hi')).text).toBe('hi');
  });
});
