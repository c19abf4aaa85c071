import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { z } from 'zod';
import { RelayError } from '../errors.js';
import { readJson } from './http.js';

// The operator's token is the human. Scripts send it as a bearer token; the web page,
// whose EventSource cannot send headers, presents it once to /api/login and then holds a
// cookie derived from it (never the token itself, and never in a URL).

export const COOKIE = 'askrelay_session';

const cookieValue = (token: string) => createHmac('sha256', token).update('askrelay web session').digest('hex');

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function isAuthorized(c: Context, token: string): boolean {
  const header = c.req.header('authorization') ?? '';
  const bearer = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
  if (bearer) return equal(bearer, token);
  const cookie = getCookie(c, COOKIE);
  return cookie !== undefined && equal(cookie, cookieValue(token));
}

export function requireToken(token: string): MiddlewareHandler {
  return async (c, next) => {
    if (!isAuthorized(c, token)) {
      throw new RelayError('unauthorized', 'Send the relay token as "Authorization: Bearer <token>".');
    }
    await next();
  };
}

const LoginSchema = z.object({ token: z.string() });

export async function login(c: Context, token: string) {
  const body = await readJson(c, LoginSchema);
  if (!equal(body.token.trim(), token)) throw new RelayError('unauthorized', 'That is not the relay token.');
  setCookie(c, COOKIE, cookieValue(token), {
    httpOnly: true,
    sameSite: 'Strict',
    path: '/',
    maxAge: 400 * 24 * 3600,
  });
  return c.json({ ok: true });
}

export function logout(c: Context) {
  setCookie(c, COOKIE, '', { httpOnly: true, sameSite: 'Strict', path: '/', maxAge: 0 });
  return c.json({ ok: true });
}
