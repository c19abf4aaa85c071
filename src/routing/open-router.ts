import type { Card } from '../cards/model.js';
import { readRouteFile, routeFileOf, writeRouteFile, type RouteFile } from './route-file.js';
import { Router, type SharedRoutes } from './router.js';
import { peopleIn, type Routes } from './rules.js';

// The relay's router as `askrelay serve` opens it: the routes from the file (which also wins
// over the database's at a start: deploy one file to every node), else the database's (a
// node started without a file takes what PUT /api/routes stored), else none.

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
  if (fromFile && shared) await shared.write(fromFile);
  const routes = fromFile ?? (await shared?.read()) ?? [];
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
      writeRouteFile(file, next);
      await shared?.write(next);
    },
    ...(shared ? { shared } : {}),
  });
}
