import { createHmac, randomBytes } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { z } from 'zod';
import { RelayError } from '../errors.js';
import { CHANNEL_IDS } from '../channels/config.js';
import { HUMAN_OPERATOR, operatorRefusal, type Principal } from '../relay/access.js';
import type { AsyncLoginStore } from '../store/login-store.js';
import { sameSecret } from '../same-secret.js';
import { readJson } from './http.js';
import { revocationKey, type Credential, type Revocations } from './revocations.js';

// The operator's token is the human. Scripts send it as a bearer token; the web page,
// whose EventSource cannot send headers, presents it once to /api/login and then holds a
// cookie naming a login the relay keeps (never the token itself, and never in a URL), so
// that /api/logout really ends it. Each session's agent token is that session's agent
// (src/relay/access.ts decides what it may do).

export const COOKIE = 'askrelay_session';
/** As long as a browser keeps a cookie (browsers cap Max-Age at 400 days). */
const LOGIN_MAX_AGE_MS = 400 * 24 * 3600 * 1000;
const LOGIN_ID = /^[A-Za-z0-9_-]{43}$/;

// Keyed by the token: the database alone gives no cookie, and a new token ends every login.
const loginKey = (token: string, id: string) => createHmac('sha256', token).update(`askrelay web login\0${id}`).digest('hex');

// Which surface a request comes from, recorded with an answer (answeredBy.surface): the
// page by its cookie; scripts and the CLI may name themselves in a header, but not as the
// page, which only the cookie is.
const SURFACE_HEADER = 'x-askrelay-surface';
const SURFACE_NAME = /^[a-z][a-z0-9-]{0,31}$/;
const COOKIE_SURFACE = 'web';

/** Who may call: the operator's token, the page's logins, and the running sessions' agent tokens. */
export interface Tokens {
  operator: string;
  /** The running session an agent token belongs to; undefined for any other text. */
  agentSession(token: string): Promise<string | undefined>;
  logins: Pick<AsyncLoginStore, 'add' | 'find' | 'remove' | 'prune'>;
  /** The person a personal token belongs to (docs/routing.md); undefined for any other text. */
  person?(token: string): Promise<string | undefined>;
}

const bearerOf = (c: Context) => /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim() || undefined;

/** Who sent the request (undefined: it is not authorized), and what revoking its credential names (src/server/revocations.ts). */
async function signIn(c: Context, tokens: Tokens): Promise<{ principal: Principal; keys: string[] } | undefined> {
  const bearer = bearerOf(c);
  if (bearer) {
    const named = c.req.header(SURFACE_HEADER)?.trim().toLowerCase() ?? '';
    // A chat channel's name is the chat's alone: a restricted card routed to a chat shows to whoever acts there.
    const surface = SURFACE_NAME.test(named) && named !== COOKIE_SURFACE && !(CHANNEL_IDS as readonly string[]).includes(named) ? named : 'api';
    // The relay token is revoked only by a restart with another one.
    if (tokens.operator && sameSecret(bearer, tokens.operator)) return { principal: HUMAN_OPERATOR(surface), keys: [] };
    const person = await tokens.person?.(bearer);
    if (person) return { principal: { kind: 'human', id: person, surface }, keys: [revocationKey.person(person)] };
    const sessionId = await tokens.agentSession(bearer);
    return sessionId ? { principal: { kind: 'agent', id: sessionId, sessionId, surface }, keys: [revocationKey.session(sessionId)] } : undefined;
  }
  const cookie = getCookie(c, COOKIE);
  const login = cookie === undefined ? undefined : await loggedIn(tokens, cookie);
  if (!login) return undefined;
  const keys = [revocationKey.login(loginKey(tokens.operator, cookie!))];
  if (login.who) return { principal: { kind: 'human', id: login.who, surface: COOKIE_SURFACE }, keys: [...keys, revocationKey.person(login.who)] };
  return { principal: HUMAN_OPERATOR(COOKIE_SURFACE), keys };
}

/** The page's login the cookie names, while it is valid: the operator's, or a person's (`who`). */
async function loggedIn(tokens: Tokens, id: string, now = Date.now()): Promise<{ who?: string } | undefined> {
  if (!tokens.operator || !LOGIN_ID.test(id)) return undefined;
  const login = await tokens.logins.find(loginKey(tokens.operator, id));
  return login && now - login.createdAt < LOGIN_MAX_AGE_MS ? login : undefined;
}

export type AuthEnv = { Variables: { principal: Principal; credential: Credential; revoked?: AbortSignal } };

/** Signs every request in; `revocations`: what a long-lived one checks again if a revocation came in meanwhile. */
export function requireToken(tokens: Tokens, revocations?: Pick<Revocations, 'heard'>): MiddlewareHandler<AuthEnv> {
  return async (c, next) => {
    const heard = revocations?.heard ?? 0;
    const signed = await signIn(c, tokens);
    if (!signed) throw new RelayError('unauthorized', 'Send the relay token as "Authorization: Bearer <token>".');
    const { principal, keys } = signed;
    c.set('principal', principal);
    c.set('credential', {
      keys,
      heard,
      stillValid: async () => {
        const again = (await signIn(c, tokens))?.principal;
        return again?.kind === principal.kind && again.id === principal.id;
      },
    });
    await next();
  };
}

/** Routes only the human may use (settings, starting sessions, the audit log). */
export const humanOnly: MiddlewareHandler<AuthEnv> = async (c, next) => {
  if (c.get('principal').kind !== 'human') {
    throw new RelayError('human_only', 'Only the human (the relay token) can do this; an agent token cannot.');
  }
  await next();
};

/** The operator's routes (src/relay/access.ts operatorRefusal): a person's token gets 403 operator_only. */
export const operatorOnly: MiddlewareHandler<AuthEnv> = async (c, next) => {
  const refused = operatorRefusal(c.get('principal'));
  if (refused) throw refused;
  await next();
};

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a browser sent the request from the relay's own page. Sec-Fetch-Site is the
 * browser's own verdict and wins when present; otherwise the Origin must be the relay's
 * (as the request reached it) or the public address's (behind a proxy).
 */
export function fromOwnOrigin(
  request: { url: string; origin?: string; fetchSite?: string },
  publicOrigin?: string,
): boolean {
  if (request.fetchSite) return request.fetchSite.trim().toLowerCase() === 'same-origin';
  const origin = originOf(request.origin);
  return origin !== undefined && (origin === originOf(request.url) || origin === publicOrigin);
}

function originOf(text: string | undefined): string | undefined {
  if (!text) return undefined;
  try {
    const { origin } = new URL(text);
    return origin === 'null' ? undefined : origin;
  } catch {
    return undefined;
  }
}

/**
 * Changes made with the page's cookie (and logging in) must come from the page: a page on
 * another port of the same host is "same-site", so SameSite=Strict still sends it the
 * cookie. Bearer requests carry their credential themselves and pass.
 */
export function ownOriginForCookies(publicUrl?: string): MiddlewareHandler {
  const publicOrigin = originOf(publicUrl);
  return async (c, next) => {
    const byCookie = c.req.path === '/api/login' || (!bearerOf(c) && getCookie(c, COOKIE) !== undefined);
    if (byCookie && !SAFE_METHODS.has(c.req.method)) {
      const request = { url: c.req.url, origin: c.req.header('origin'), fetchSite: c.req.header('sec-fetch-site') };
      if (!fromOwnOrigin(request, publicOrigin)) {
        throw new RelayError(
          'cross_origin',
          "Refused: a change made with the page's cookie must come from the relay's own page (this request's Origin / Sec-Fetch-Site is another origin). Scripts send \"Authorization: Bearer <token>\" instead.",
        );
      }
    }
    await next();
  };
}

export const LoginSchema = z.object({ token: z.string() });

export interface CookieOptions {
  /** Set Secure on the cookie whatever the request's scheme (ASKRELAY_PUBLIC_URL is https). */
  secure: boolean;
}

export async function login(c: Context, tokens: Tokens, options: CookieOptions) {
  // An empty token would let an empty guess in; the relay refuses to start with one, and this is the second lock.
  if (!tokens.operator) throw new RelayError('unauthorized', 'The relay has no token, so nobody can log in; set ASKRELAY_TOKEN or <data>/token and restart it.');
  const body = await readJson(c, LoginSchema);
  const token = body.token.trim();
  // The relay token signs in as the operator; a personal token as its person (docs/routing.md).
  const who = sameSecret(token, tokens.operator) ? undefined : await tokens.person?.(token);
  if (!sameSecret(token, tokens.operator) && !who) throw new RelayError('unauthorized', 'That is not the relay token or a personal token.');
  const id = randomBytes(32).toString('base64url');
  const now = Date.now();
  await tokens.logins.prune(now - LOGIN_MAX_AGE_MS);
  await tokens.logins.add(loginKey(tokens.operator, id), now, who);
  setCookie(c, COOKIE, id, { ...cookieAttributes(c, options), maxAge: LOGIN_MAX_AGE_MS / 1000 });
  return c.json({ ok: true });
}

/**
 * Ends the login the cookie names (a copy of the cookie is refused from now on, and what it
 * holds open ends, on every node) and clears it.
 */
export async function logout(c: Context, tokens: Tokens, options: CookieOptions, revocations?: Pick<Revocations, 'revoke'>) {
  const id = getCookie(c, COOKIE);
  if (id !== undefined && tokens.operator && LOGIN_ID.test(id)) {
    const key = loginKey(tokens.operator, id);
    await tokens.logins.remove(key);
    await revocations?.revoke([revocationKey.login(key)]);
  }
  setCookie(c, COOKIE, '', { ...cookieAttributes(c, options), maxAge: 0 });
  return c.json({ ok: true });
}

function cookieAttributes(c: Context, { secure }: CookieOptions) {
  return {
    httpOnly: true,
    sameSite: 'Strict' as const,
    secure: secure || new URL(c.req.url).protocol === 'https:',
    path: '/',
  };
}
