import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Card } from '../../src/cards/model.js';
import { runCli } from '../support/cli.js';
import { freshDatabase } from '../support/postgres.js';
import { startTestRelay } from '../support/running-relay.js';

// The routes' file (docs/routing.md): <data>/routes.json or ASKRELAY_ROUTES. A mistake in it
// stops `askrelay serve` with a sentence naming the file, rule and field; PUT /api/routes
// writes it (0600), so a restart keeps what was put.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'askrelay-routes-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the routes file', () => {
  it('a mistake in it stops serve with a sentence naming the file, the rule and the field', async () => {
    writeFileSync(join(dir, 'routes.json'), JSON.stringify({ routes: [{ name: 'ok', to: ['everyone'] }, { name: 'pay', to: ['ada'], escalate: [{ after: 'soon', to: ['bob'] }] }] }));
    const bad = await runCli(['serve', '--port', '0', '--data', dir], {}, dir);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${join(dir, 'routes.json')}: rule 2 (pay): escalate[0].after: "soon" is not a duration; write it like 8h, 90m, 2s, 500ms or 1h30m.`);

    writeFileSync(join(dir, 'other.json'), '{"routes": [');
    const broken = await runCli(['serve', '--port', '0', '--data', dir], { ASKRELAY_ROUTES: join(dir, 'other.json') }, dir);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain(`ASKRELAY_ROUTES (${join(dir, 'other.json')}): not valid JSON`);

    const missing = await runCli(['serve', '--port', '0', '--data', dir], { ASKRELAY_ROUTES: join(dir, 'nowhere.json') }, dir);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`ASKRELAY_ROUTES (${join(dir, 'nowhere.json')}): no such file.`);
  });

  it('routes the cards by the file; PUT writes it (0600) and a restart keeps what was put', async () => {
    const file = join(dir, 'routes.json');
    writeFileSync(file, JSON.stringify([{ name: 'approvals', match: { kind: 'approval' }, to: ['everyone'] }, { name: 'all', to: ['slack'] }]));
    let relay = await startTestRelay({}, dir);
    try {
      const card = (await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Go?' }] } })).json()) as Card;
      expect(card).toMatchObject({ route: 'all', routedTo: ['slack'] });
      const put = await relay.api('/api/routes', { method: 'PUT', json: { routes: [{ name: 'ops', to: ['telegram:-100'] }] } });
      expect(put.status).toBe(200);
    } finally {
      await relay.close();
    }
    // Two-node runs keep the routes in the database; the file is written by the node that took the PUT.
    if (process.env.ASKRELAY_TEST_NODES !== '2') {
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ routes: [{ name: 'ops', match: {}, to: ['telegram:-100'] }] });
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }
    relay = await startTestRelay({}, dir);
    try {
      expect(await (await relay.api('/api/routes')).json()).toEqual({ routes: [{ name: 'ops', match: {}, to: ['telegram:-100'] }] });
      const card = (await (await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Go?' }] } })).json()) as Card;
      expect(card).toMatchObject({ route: 'ops', routedTo: ['telegram:-100'] });
    } finally {
      await relay.close();
    }
  });

  it('a PUT whose file cannot be written is 503 with the reason, and changes nothing', async () => {
    const conf = join(dir, 'conf');
    mkdirSync(conf);
    writeFileSync(join(conf, 'routes.json'), JSON.stringify([{ name: 'kept', to: ['everyone'] }]));
    const relay = await startTestRelay({ ASKRELAY_ROUTES: join(conf, 'routes.json') }, join(dir, 'data'));
    try {
      // The folder gives way to a plain file: nothing can be written there any more (even as root).
      rmSync(conf, { recursive: true });
      writeFileSync(conf, 'not a folder');
      const res = await relay.api('/api/routes', { method: 'PUT', json: { routes: [{ name: 'new', to: ['slack'] }] } });
      expect(res.status).toBe(503);
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      expect(error.code).toBe('store_unavailable');
      expect(error.message).toMatch(new RegExp(`^The routes could not be written to ASKRELAY_ROUTES \\(${join(conf, 'routes.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\) \\(ENOTDIR.*\\); nothing changed\\.$`));
      expect(((await (await relay.api('/api/routes')).json()) as { routes: { name: string }[] }).routes.map((r) => r.name)).toEqual(['kept']);
    } finally {
      await relay.close();
    }
  });

  it('nodes on PostgreSQL share the routes: an old file on a restarting node does not undo a PUT, an edited one replaces them', async () => {
    const db = await freshDatabase();
    const file = join(dir, 'routes.json');
    const other = join(dir, 'other');
    const start = (folder: string) => startTestRelay({}, folder, '0', { databaseUrl: db.url });
    const routesOf = async (relay: Awaited<ReturnType<typeof start>>) => ((await (await relay.api('/api/routes')).json()) as { routes: { name: string }[] }).routes.map((r) => r.name);
    try {
      writeFileSync(file, JSON.stringify([{ name: 'from-file', to: ['everyone'] }]));
      const a = await start(dir);
      const b = await start(other); // no file of its own: the database's
      expect(await routesOf(b)).toEqual(['from-file']);
      expect((await b.api('/api/routes', { method: 'PUT', json: { routes: [{ name: 'put-on-b', to: ['slack'] }] } })).status).toBe(200);
      // The next card on the other node follows at once.
      expect(((await (await a.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Go?' }] } })).json()) as Card).route).toBe('put-on-b');
      await a.close();
      const again = await start(dir);
      expect(await routesOf(again)).toEqual(['put-on-b']);
      await again.close();
      writeFileSync(file, JSON.stringify([{ name: 'edited', to: ['everyone'] }]));
      const edited = await start(dir);
      expect(await routesOf(edited)).toEqual(['edited']);
      expect(await routesOf(b)).toEqual(['edited']);
      await edited.close();
      await b.close();
    } finally {
      await db.drop();
    }
  });
});
