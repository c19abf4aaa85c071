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

// Which surface a request comes from, recorded with an answer (answeredBy.surface): the
// page by its cookie; scripts and the CLI may name themselves in a header.
const SURFACE_HEADER = 'x-askrelay-surface';
const SURFACE_NAME = /^[a-z][a-z0-9-]{0,31}$/;

/** The surface of an authorized request, or undefined when it is not authorized. */
export function authorizedSurface(c: Context, token: string): string | undefined {
  const header = c.req.header('authorization') ?? '';
  const bearer = /^Bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
  if (bearer) {
    if (!equal(bearer, token)) return undefined;
    const named = c.req.header(SURFACE_HEADER)?.trim().toLowerCase() ?? '';
    return SURFACE_NAME.test(named) ? named : 'api';
  }
  const cookie = getCookie(c, COOKIE);
  return cookie !== undefined && equal(cookie, cookieValue(token)) ? 'web' : undefined;
}

export type AuthEnv = { Variables: { surface: string } };

export function requireToken(token: string): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const surface = authorizedSurface(c, token);
    if (!surface) throw new RelayError('unauthorized', 'Send the relay token as "Authorization: Bearer <token>".');
    c.set('surface', surface);
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
    secure: new URL(c.req.url).protocol === 'https:',
    path: '/',
    maxAge: 400 * 24 * 3600,
  });
  return c.json({ ok: true });
}

export function logout(c: Context) {
  setCookie(c, COOKIE, '', { httpOnly: true, sameSite: 'Strict', path: '/', maxAge: 0 });
  return c.json({ ok: true });
}
