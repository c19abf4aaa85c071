import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// People (docs/routing.md): the operator makes them through /api/users; a personal token is
// a human principal named by its person, who answers cards (approvals included) and is named
// in answeredBy and the audit log, and may not manage people or sessions. Two nodes: the
// requests spread over both (ASKRELAY_TEST_NODES=2).

let relay: TestRelay;
beforeAll(async () => {
  relay = await startTestRelay({ ASKRELAY_WAIT: '1h' });
});
afterAll(() => relay?.stop());

const as = (token: string, path: string, init: RequestInit & { json?: unknown } = {}) => relay.api(path, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) } });
const errorOf = async (res: Response) => ((await res.json()) as { error: { code: string; message: string } }).error;

async function addUser(name: string): Promise<string> {
  const res = await relay.api('/api/users', { method: 'POST', json: { name } });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { name: string; createdAt: string; token: string };
  expect(body).toEqual({ name, createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), links: [], token: expect.stringMatching(/^asp_[\w-]{32}$/) });
  return body.token;
}

describe('people', () => {
  it('the operator makes, lists and removes them; a token is shown once and kept only as its hash', async () => {
    const token = await addUser('ada');
    const listed = (await (await relay.api('/api/users')).json()) as { users: { name: string }[] };
    expect(listed.users.map((u) => u.name)).toContain('ada');
    expect(JSON.stringify(listed)).not.toContain(token);

    const again = await relay.api('/api/users', { method: 'POST', json: { name: 'ada' } });
    expect(again.status).toBe(409);
    expect(await errorOf(again)).toEqual({ code: 'already_exists', message: 'There is already a person called "ada".' });
    for (const [name, message] of [
      ['Ada', 'name: a name is 1-32 lowercase letters, digits, _ or -, starting with a letter'],
      ['operator', 'name: that name is reserved (operator, everyone, relay, system, telegram, slack, discord, mattermost)'],
      ['telegram:1', 'name: a name is 1-32 lowercase letters, digits, _ or -, starting with a letter'],
    ]) {
      const bad = await relay.api('/api/users', { method: 'POST', json: { name } });
      expect(bad.status, name).toBe(400);
      expect(await errorOf(bad)).toEqual({ code: 'invalid_request', message });
    }

    const removed = await relay.api('/api/users/ada', { method: 'DELETE' });
    expect(await removed.json()).toEqual({ ok: true, name: 'ada' });
    expect((await as(token, '/api/cards')).status).toBe(401);
    expect((await relay.api('/api/users/ada', { method: 'DELETE' })).status).toBe(404);
  });

  it('a personal token answers as its person, approvals included, in answeredBy and the audit log', async () => {
    const token = await addUser('bea');
    const asked = (await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ id: 'db', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }] } })).json()) as Card;
    const answered = await as(token, `/api/cards/${asked.id}/answer`, { method: 'POST', json: { answers: { db: { selected: ['SQLite'] } } } });
    expect(answered.status).toBe(200);
    expect(((await answered.json()) as Card).answeredBy).toEqual({ kind: 'human', id: 'bea', surface: 'api' });

    const approval = await relay.relay.create({ kind: 'approval', questions: [{ id: 'ok', text: 'Deploy?', options: ['Approve', 'Deny'] }] });
    const approved = await as(token, `/api/cards/${approval.id}/answer`, { method: 'POST', json: { answers: { ok: { selected: ['Approve'] } } } });
    expect(approved.status).toBe(200);
    const skipped = (await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Ship it?', options: ['Yes', 'No'] }] } })).json()) as Card;
    expect(((await (await as(token, `/api/cards/${skipped.id}/skip`, { method: 'POST' })).json()) as Card).answeredBy).toMatchObject({ id: 'bea' });

    const entries = ((await (await relay.api('/api/audit?limit=10000')).json()) as { entries: { event: string; cardId: string; actor: { kind: string; id: string } }[] }).entries;
    expect(entries.find((e) => e.cardId === asked.id && e.event === 'card.answered')?.actor).toEqual({ kind: 'human', id: 'bea' });
    expect(entries.find((e) => e.cardId === approval.id && e.event === 'card.answered')?.actor).toEqual({ kind: 'human', id: 'bea' });
  });

  it('a person may not manage people or sessions: 403 operator_only', async () => {
    const token = await addUser('cy');
    for (const [method, path, json] of [
      ['GET', '/api/users', undefined],
      ['POST', '/api/users', { name: 'dan' }],
      ['DELETE', '/api/users/cy', undefined],
      ['POST', '/api/sessions', { provider: 'claude', prompt: 'Hi' }],
      ['DELETE', '/api/sessions/s_nope', undefined],
    ] as const) {
      const res = await as(token, path, { method, ...(json ? { json } : {}) });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect((await errorOf(res)).code).toBe('operator_only');
    }
    // What any human may do stays open to them.
    expect((await as(token, '/api/cards')).status).toBe(200);
    expect((await as(token, '/api/audit/head')).status).toBe(200);
  });

  it("a person may not read what spans everyone's cards: the audit log, its verification, the nodes, the channels (403 operator_only)", async () => {
    const token = await addUser('hal');
    for (const path of ['/api/audit', '/api/audit?after=0&limit=10', '/api/audit/verify', '/api/nodes', '/api/channels']) {
      const res = await as(token, path);
      expect(res.status, path).toBe(403);
      expect(await errorOf(res), path).toEqual({ code: 'operator_only', message: 'Only the operator (the relay token) can do this; a personal token cannot.' });
      expect((await relay.api(path)).status, path).toBe(200);
    }
    // The head names no card: any human may pin it.
    expect((await as(token, '/api/audit/head')).status).toBe(200);
  });

  it('signs in on the page with a personal token: the cookie is that person, until they are removed', async () => {
    const token = await addUser('dee');
    const origin = new URL(relay.url).origin;
    const login = await fetch(new URL('/api/login', relay.url), { method: 'POST', headers: { 'content-type': 'application/json', origin }, body: JSON.stringify({ token }) });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const withCookie = (path: string, init: RequestInit = {}) => fetch(new URL(path, relay.url), { ...init, headers: { cookie, origin, ...(init.headers as Record<string, string>) } });
    expect(await (await withCookie('/api/me')).json()).toEqual({ kind: 'human', id: 'dee', operator: false });
    expect(await (await relay.api('/api/me')).json()).toEqual({ kind: 'human', id: 'operator', operator: true });
    const asked = (await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ id: 'q', text: 'Go?', options: ['Yes', 'No'] }] } })).json()) as Card;
    const answered = await withCookie(`/api/cards/${asked.id}/answer`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ answers: { q: { selected: ['Yes'] } } }) });
    expect(((await answered.json()) as Card).answeredBy).toEqual({ kind: 'human', id: 'dee', surface: 'web' });
    const wrong = await fetch(new URL('/api/login', relay.url), { method: 'POST', headers: { 'content-type': 'application/json', origin }, body: JSON.stringify({ token: 'asp_nope-0123456789abcdef0123456789' }) });
    expect(await errorOf(wrong)).toEqual({ code: 'unauthorized', message: 'That is not the relay token or a personal token.' });
    // Removed: the cookie stops working too, on every node.
    expect((await relay.api('/api/users/dee', { method: 'DELETE' })).status).toBe(200);
    expect((await withCookie('/api/me')).status).toBe(401);
  });

  it('links chat users to a person: one link names one person; a removed person takes their links along', async () => {
    await addUser('eve');
    await addUser('fay');
    const link = (name: string, body: unknown) => relay.api(`/api/users/${name}/links`, { method: 'POST', json: body });
    expect(await (await link('eve', { link: 'telegram:42' })).json()).toMatchObject({ name: 'eve', links: ['telegram:42'] });
    // The same chat user linked to another person moves there.
    expect(await (await link('fay', { link: 'telegram:42' })).json()).toMatchObject({ name: 'fay', links: ['telegram:42'] });
    const users = ((await (await relay.api('/api/users')).json()) as { users: { name: string; links: string[] }[] }).users;
    expect(users.find((u) => u.name === 'eve')?.links).toEqual([]);
    const bad = await link('fay', { link: 'irc:42' });
    expect(bad.status).toBe(400);
    expect((await errorOf(bad)).message).toBe('link: a link is <platform>:<user id>, the platform one of telegram, slack, discord, mattermost');
    expect((await link('nobody', { link: 'slack:U1' })).status).toBe(404);
    expect((await relay.api('/api/users/eve/links/telegram:42', { method: 'DELETE' })).status).toBe(404);
    expect(await (await relay.api('/api/users/fay/links/telegram:42', { method: 'DELETE' })).json()).toEqual({ ok: true, name: 'fay', link: 'telegram:42' });
    await link('fay', { link: 'slack:U7' });
    await relay.api('/api/users/fay', { method: 'DELETE' });
    await addUser('fay');
    expect(((await (await relay.api('/api/users')).json()) as { users: { name: string; links: string[] }[] }).users.find((u) => u.name === 'fay')?.links).toEqual([]);
  });

  it('a personal token is never an answer: its shape, and a live one glued into a word (by its hash), are 422 credential_refused on reply and answer', async () => {
    const token = await addUser('gil');
    const open = async () =>
      (await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ id: 'why', text: 'Anything to add?' }] } })).json()) as Card;
    const refused = async (res: Response, kind: string) => {
      expect(res.status).toBe(422);
      expect(await errorOf(res)).toEqual({ code: 'credential_refused', message: `The answer to question "Anything to add?" looks like ${kind}. Never answer with a credential; give it to the tool that needs it another way.` });
    };
    // Sent by its own person and by the operator: whoever reads the answer would be gil.
    for (const [sender, text, kind] of [
      [token, token, 'an askrelay personal token'],
      [undefined, `use ${token} there`, 'an askrelay personal token'],
      [token, `key${token}`, 'an askrelay personal token'],
    ] as const) {
      const card = await open();
      const send = (path: string, json: unknown) => (sender ? as(sender, path, { method: 'POST', json }) : relay.api(path, { method: 'POST', json }));
      await refused(await send(`/api/cards/${card.id}/reply`, { text }), kind);
      await refused(await send(`/api/cards/${card.id}/answer`, { answers: { why: { selected: [], text } } }), kind);
      expect((await relay.relay.get(card.id)).status).toBe('pending');
    }
    // A word of that shape glued to another is only refused when it is a live token.
    const card = await open();
    const made = `key${token.slice(0, 10)}${token.slice(10).split('').reverse().join('')}`;
    const answered = await relay.api(`/api/cards/${card.id}/reply`, { method: 'POST', json: { text: made } });
    expect(answered.status).toBe(200);
    // A removed person's token no longer counts as one.
    expect((await relay.api('/api/users/gil', { method: 'DELETE' })).status).toBe(200);
    const later = await open();
    expect((await relay.api(`/api/cards/${later.id}/reply`, { method: 'POST', json: { text: `key${token}` } })).status).toBe(200);
  });
});
