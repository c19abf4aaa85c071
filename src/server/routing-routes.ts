import { Hono } from 'hono';
import { z } from 'zod';
import { RelayError } from '../errors.js';
import type { Router } from '../routing/router.js';
import { parseRoutes } from '../routing/rules.js';
import { operatorOnly, type AuthEnv } from './auth.js';
import { readJson } from './http.js';

// The routes (docs/routing.md), for the operator only: GET shows them, PUT replaces them all
// (validated whole: a mistake names its rule and field and changes nothing), on every node.

export function routingRoutes(router: Router) {
  const app = new Hono<AuthEnv>();
  app.use('*', operatorOnly);

  app.get('/', async (c) => c.json({ routes: await router.current() }));

  app.put('/', async (c) => {
    // Read as any JSON, then judged by the routes' own reader, whose messages name the rule.
    const parsed = parseRoutes(await readJson(c, z.unknown()));
    if ('error' in parsed) throw new RelayError('invalid_request', parsed.error);
    await router.replace(parsed.routes);
    return c.json({ routes: await router.current() });
  });

  return app;
}
