import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DB_FILE } from '../../src/start.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { idleSession } from '../support/session-api.js';

// The data folder as the relay leaves it, read straight from the disk: who may read each
// file, and that the SQLite file (with its -wal) holds no agent token a reader could use.

const scratch = mkdtempSync(join(tmpdir(), 'askrelay-data-files-'));
let fake: AnthropicServer;
beforeAll(async () => {
  fake = await startAnthropicServer({ model: () => ({ text: 'Done.' }) });
});
afterAll(async () => {
  await fake?.close();
  rmSync(scratch, { recursive: true, force: true });
});

let n = 0;
const folder = () => join(scratch, `case-${++n}`, 'data');
const mode = (path: string) => statSync(path).mode & 0o777;
const providerEnv = () => ({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h' });

/** Every file of the folder with its mode, e.g. {"askrelay.sqlite": 0o600}. */
function modes(dir: string): Record<string, number> {
  return Object.fromEntries(readdirSync(dir).map((name) => [name, mode(join(dir, name))]));
}

/** The bytes of the database and its -wal, as someone who copied them would have them. */
function databaseBytes(dir: string): Buffer {
  const parts = [DB_FILE, `${DB_FILE}-wal`].map((f) => join(dir, f)).filter((f) => existsSync(f));
  return Buffer.concat(parts.map((f) => readFileSync(f)));
}

const asAgent = (relay: TestRelay, token: string) => fetch(new URL('/api/cards', relay.url), { headers: { authorization: `Bearer ${token}` } });

describe('file modes', { timeout: 30_000 }, () => {
  it('a fresh start makes the folder 0700 and every file in it 0600, whatever the umask', async () => {
    const data = folder();
    const umask = process.umask(0); // the most open one: nothing is taken off what the relay asks for
    let relay: TestRelay | undefined;
    try {
      relay = await startTestRelay({ ASKRELAY_TOKEN: '' }, data); // the token made and kept in the folder
      await relay.api('/api/cards', { method: 'POST', json: { questions: [{ text: 'Written?' }] } });
      expect(mode(data)).toBe(0o700);
      const files = modes(data);
      expect(Object.keys(files).sort()).toEqual(expect.arrayContaining([DB_FILE, `${DB_FILE}-shm`, `${DB_FILE}-wal`, 'audit.key', 'token', 'vapid.json']));
      for (const [name, m] of Object.entries(files)) expect(m.toString(8), name).toBe('600');
    } finally {
      process.umask(umask);
      await relay?.stop();
    }
  });

  it('an existing folder and database open to others are tightened at start, and the relay says so', async () => {
    const data = folder();
    await (await startTestRelay({}, data)).stop();
    chmodSync(data, 0o755);
    chmodSync(join(data, DB_FILE), 0o644);
    // What an older relay left open: its -wal and -shm, readable by all.
    const older = new Database(join(data, DB_FILE));
    older.pragma('journal_mode = WAL');
    older.prepare('SELECT COUNT(*) FROM cards').get();
    chmodSync(join(data, `${DB_FILE}-wal`), 0o644);
    chmodSync(join(data, `${DB_FILE}-shm`), 0o644);
    const relay = await startTestRelay({}, data);
    try {
      expect(relay.notices).toContain(`The data folder ${data} was open to other users (mode 0755); it is now 0700.`);
      expect(mode(data)).toBe(0o700);
      for (const name of [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`]) expect(mode(join(data, name)).toString(8), name).toBe('600');
    } finally {
      older.close();
      await relay.stop();
    }
  });
});

describe('agent tokens', { timeout: 30_000 }, () => {
  it('the database holds no agent token, only its hash; a resumed session keeps its token', async () => {
    const data = folder();
    let relay = await startTestRelay(providerEnv(), data);
    let token: string;
    let id: string;
    try {
      ({ id } = await idleSession(relay, { prompt: 'hello' }));
      token = relay.sessions.agentToken(id);
      expect(token).toMatch(/^asa_[\w-]{32,}$/);
      expect((await asAgent(relay, token)).status).toBe(200);
      expect(databaseBytes(data).includes(token)).toBe(false);
    } finally {
      await relay.stop();
    }
    expect(databaseBytes(data).includes(token)).toBe(false);
    const db = new Database(join(data, DB_FILE), { readonly: true });
    expect(db.prepare('SELECT token_hash FROM agent_tokens WHERE session_id = ?').pluck().get(id)).toBe(createHash('sha256').update(token).digest('hex'));
    db.close();

    // Started again: the session is resumed, and its agent's token (the one it was given) still works.
    relay = await startTestRelay(providerEnv(), data);
    try {
      expect(relay.sessions.agentToken(id)).toBe(token);
      expect((await asAgent(relay, token)).status).toBe(200);
      expect(databaseBytes(data).includes(token)).toBe(false);
    } finally {
      await relay.stop();
    }
  });

  it('plain tokens in an older database are hashed in place when it is opened', () => {
    const file = join(folder(), DB_FILE);
    const plain = Array.from({ length: 20 }, (_, i) => `asa_older_plain_token_${String(i).padStart(24, 'x')}`);
    // The older schema: agent tokens kept as they are.
    const before = new SqliteStore(file);
    before.close();
    const older = new Database(file);
    older.exec('DROP TABLE agent_tokens; CREATE TABLE agent_tokens (token TEXT PRIMARY KEY, session_id TEXT NOT NULL UNIQUE)');
    const now = new Date().toISOString();
    plain.forEach((token, i) => {
      older.prepare('INSERT INTO sessions (id, status, created_at, data) VALUES (?, ?, ?, ?)').run(`s_${i}`, 'idle', Date.now(), JSON.stringify({ id: `s_${i}`, status: 'idle', createdAt: now }));
      older.prepare('INSERT INTO agent_tokens (token, session_id) VALUES (?, ?)').run(token, `s_${i}`);
    });
    older.close();
    expect(readFileSync(file).includes(plain[0])).toBe(true);

    const store = new SqliteStore(file);
    try {
      plain.forEach((token, i) => expect(store.sessions.sessionOfToken(token)).toBe(`s_${i}`));
      expect(store.sessions.sessionOfToken(createHash('sha256').update(plain[0]).digest('hex'))).toBeUndefined(); // the hash is no token
    } finally {
      store.close();
    }
    const bytes = readFileSync(file);
    for (const token of plain) expect(bytes.includes(token), token).toBe(false);
    expect(bytes.includes('asa_older_plain_token')).toBe(false);
  });
});
