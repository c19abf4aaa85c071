import { statSync } from 'node:fs';
import type { Card } from '../cards/model.js';
import { RelayError } from '../errors.js';
import { readRouteFile, routeFileOf, writeRouteFile, type RouteFile } from './route-file.js';
import { Router, type SharedRoutes } from './router.js';
import { peopleIn, type Routes } from './rules.js';

// The relay's router as `askrelay serve` opens it: the routes from the file, else none. On
// PostgreSQL the nodes share the database's: a node's file replaces them at its start only
// when it was changed after they were last written (an edited file is deployed; an old one on
// a restarting node does not undo a PUT /api/routes another node took).

/** The route file and its routes, read before anything opens: a mistake in it stops the start there. */
export function loadRoutes(env: NodeJS.ProcessEnv, dataDir: string): { file: RouteFile; routes?: Routes } {
  const file = routeFileOf(env, dataDir);
  const routes = readRouteFile(file, env);
  return { file, ...(routes ? { routes } : {}) };
}

export interface OpenRouterOptions {
  loaded: ReturnType<typeof loadRoutes>;
  shared?: SharedRoutes;
  sessions: { get(id: string): Promise<{ labels?: Card['labels'] } | undefined> };
  users: { list(): Promise<{ name: string }[]> };
  log: (line: string) => void;
}

export async function openRouter({ loaded, shared, sessions, users, log }: OpenRouterOptions): Promise<Router> {
  const { file, routes: fromFile } = loaded;
  let routes = fromFile ?? [];
  let at: number | null = null;
  if (shared) {
    const stored = await shared.read();
    if (fromFile && (stored.at === null || statSync(file.path).mtimeMs > stored.at)) at = await shared.write(fromFile);
    else ({ routes, at } = stored);
    if (fromFile && routes !== fromFile) log(`routes: the database's routes were replaced after ${file.named} was last changed; this node uses the database's`);
  }
  const people = async () => (await users.list()).map((u) => u.name);
  // Someone added later is fine at a start (people are made while the relay runs); PUT refuses.
  const known = new Set(await people());
  const missing = [...new Set(routes.flatMap((r) => peopleIn([...r.to, ...(r.escalate ?? []).flatMap((s) => s.to)])))].filter((n) => !known.has(n));
  if (missing.length) log(`routes: no person called ${missing.join(', ')} yet; cards routed to them notify nobody until they are added (askrelay users add)`);
  return new Router({
    routes,
    sessionLabels: async (id) => (await sessions.get(id))?.labels,
    people,
    save: async (next) => {
      try {
        writeRouteFile(file, next);
      } catch (err) {
        // Before anything else changed: the relay keeps routing by the routes it had.
        throw new RelayError('store_unavailable', `The routes could not be written to ${file.named} (${(err as Error).message}); nothing changed.`);
      }
    },
    ...(shared ? { shared: { store: shared, at } } : {}),
  });
}
