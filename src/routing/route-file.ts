import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeSecretFile } from '../store/secret-file.js';
import { parseRoutes, type Routes } from './rules.js';

// Where the routes are written down: ASKRELAY_ROUTES (a file), else <data>/routes.json when
// it exists. A mistake stops `askrelay serve` with a sentence naming the file, the rule and
// the field, rather than a relay that routes differently from what its operator wrote.

export interface RouteFile {
  path: string;
  /** How the file is named in messages: "ASKRELAY_ROUTES (/etc/askrelay/routes.json)". */
  named: string;
}

export function routeFileOf(env: NodeJS.ProcessEnv, dataDir: string): RouteFile {
  const given = env.ASKRELAY_ROUTES?.trim();
  const path = given ? resolve(given) : join(dataDir, 'routes.json');
  return { path, named: given ? `ASKRELAY_ROUTES (${path})` : path };
}

/** The file's routes; undefined when there is no file (ASKRELAY_ROUTES naming none is a mistake). */
export function readRouteFile(file: RouteFile, env: NodeJS.ProcessEnv): Routes | undefined {
  if (!existsSync(file.path)) {
    if (env.ASKRELAY_ROUTES?.trim()) throw new Error(`${file.named}: no such file.`);
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file.path, 'utf8'));
  } catch (err) {
    throw new Error(`${file.named}: not valid JSON (${(err as Error).message}).`);
  }
  const parsed = parseRoutes(value);
  if ('error' in parsed) throw new Error(`${file.named}: ${parsed.error}.`);
  return parsed.routes;
}

/** Writes the routes PUT /api/routes took, so the next start keeps them (a whole file, never half of one). */
export function writeRouteFile(file: RouteFile, routes: Routes): void {
  writeSecretFile(file.path, `${JSON.stringify({ routes }, null, 2)}\n`);
}
