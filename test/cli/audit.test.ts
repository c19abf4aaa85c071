import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Card, CardInput } from '../../src/cards/model.js';
import type { Session } from '../../src/sessions/model.js';
import { DB_FILE } from '../../src/start.js';
import { hashEntry, type AuditEntry } from '../../src/store/audit-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { startAnthropicServer, type AnthropicServer } from '../fakes/anthropic-server.js';
import { freePort, runCli } from '../support/cli.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';
import { idleSession } from '../support/session-api.js';

// `askrelay audit` and `askrelay audit verify` as child processes against real relays with
// their own SQLite files: a human answers and skips, one session's agent answers another's
// card and is refused a third, the human changes a setting; then the file is tampered with
// directly and verify names the broken entry.

const scratch = mkdtempSync(join(tmpdir(), 'askrelay-cli-audit-'));
const env = (relay: TestRelay, token = 'test-token-0123456789abcdef') => ({ ASKRELAY_URL: relay.url, ASKRELAY_TOKEN: token });
const cli = (relay: TestRelay, args: string[], token?: string) => runCli(args, env(relay, token), scratch);

let fake: AnthropicServer;
let relay: TestRelay;

beforeAll(async () => {
  fake = await startAnthropicServer({ model: () => ({ text: 'Done.' }) });
  relay = await startTestRelay({ ANTHROPIC_BASE_URL: fake.url, ANTHROPIC_API_KEY: 'dummy', ASKRELAY_WAIT: '1h' });
});
afterAll(async () => {
  await relay?.stop();
  await fake?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function create(on: TestRelay, input: CardInput): Promise<Card> {
  const res = await on.api('/api/cards', { method: 'POST', json: input });
  expect(res.status).toBe(201);
  return (await res.json()) as Card;
}

const question = (text: string): CardInput => ({ questions: [{ text, options: ['A', 'B'] }] });

/** The log as the API returns it: the raw body too, to compare --jsonl byte for byte. */
async function apiLog(on: TestRelay): Promise<{ entries: AuditEntry[]; raw: string }> {
  const res = await on.api('/api/audit?limit=10000');
  expect(res.status).toBe(200);
  const raw = await res.text();
  return { entries: (JSON.parse(raw) as { entries: AuditEntry[] }).entries, raw };
}

function asAgent(sessionId: string, path: string, json: unknown): Promise<Response> {
  return fetch(new URL(path, relay.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${relay.sessions.agentToken(sessionId)}`, 'content-type': 'application/json' },
    body: JSON.stringify(json),
  });
}

/** The table's rows, split on runs of two or more spaces (no cell holds two spaces in a row). */
const rowsOf = (stdout: string) => stdout.trimEnd().split('\n').map((line) => line.trim().split(/ {2,}/));

describe('askrelay audit', { timeout: 60_000 }, () => {
  let answered: Card;
  let skipped: Card;
  let byAgent: Card;
  let refused: Card;
  let a: Session;
  let b: Session;

  beforeAll(async () => {
    // The human: one card answered from the terminal, one skipped over the API.
    answered = await create(relay, question('Answered from the terminal?'));
    const run = await cli(relay, ['answer', answered.id, 'B']);
    expect(run.code).toBe(0);
    skipped = await create(relay, question('Skipped?'));
    expect((await relay.api(`/api/cards/${skipped.id}/skip`, { method: 'POST' })).status).toBe(200);

    // Agents: A lets other agents answer its cards, B does not. B's agent answers a card of
    // A; A's agent is refused another card of its own session (only others may answer it).
    [a, b] = await Promise.all([idleSession(relay, { prompt: 'session A', agentsMayAnswer: true }), idleSession(relay, { prompt: 'session B', agentsMayAnswer: false })]);
    byAgent = await relay.relay.create({ sessionId: a.id, questions: [{ text: 'Which one, agent?', options: ['A', 'B'] }] });
    expect((await asAgent(b.id, `/api/cards/${byAgent.id}/answer`, { answers: { q1: { selected: ['A'] } } })).status).toBe(200);
    refused = await relay.relay.create({ sessionId: a.id, questions: [{ text: 'Not for your own agent?', options: ['A', 'B'] }] });
    expect((await asAgent(a.id, `/api/cards/${refused.id}/answer`, { answers: { q1: { selected: ['B'] } } })).status).toBe(403);

    // The human lets agents answer B's cards after all.
    const patch = await relay.api(`/api/sessions/${b.id}`, { method: 'PATCH', json: { agentsMayAnswer: true } });
    expect(patch.status).toBe(200);
  });

  it('prints every entry as a table: seq, time, event, card, actor, surface, detail', async () => {
    const run = await cli(relay, ['audit']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const [head, ...rows] = rowsOf(run.stdout);
    expect(head).toEqual(['SEQ', 'TIME (UTC)', 'EVENT', 'CARD', 'ACTOR', 'SURFACE', 'DETAIL']);

    const { entries } = await apiLog(relay);
    expect(rows).toHaveLength(entries.length);
    rows.forEach((row, i) => {
      expect(row[0]).toBe(String(entries[i].seq));
      expect(row[1]).toBe(entries[i].at.slice(0, 19).replace('T', ' '));
    });
    const cells = rows.map((r) => r.slice(2));
    expect(cells).toEqual([
      ['card.created', answered.id, 'human:operator', 'api', 'kind=question tool=cards'],
      ['card.answered', answered.id, 'human:operator', 'cli'],
      ['card.created', skipped.id, 'human:operator', 'api', 'kind=question tool=cards'],
      ['card.skipped', skipped.id, 'human:operator', 'api'],
      ['card.created', byAgent.id, 'system:relay', 'api', 'kind=question tool=cards'],
      ['card.answered', byAgent.id, `agent:${b.id}`, 'api'],
      ['card.created', refused.id, 'system:relay', 'api', 'kind=question tool=cards'],
      ['card.refused', refused.id, `agent:${a.id}`, 'api', 'action=answer code=own_session'],
      ['session.permission', '-', 'human:operator', 'api', `session=${b.id} agentsMayAnswer=true`],
    ]);

    // --after: only what came later.
    const later = await cli(relay, ['audit', '--after', '7']);
    expect(later.code).toBe(0);
    expect(rowsOf(later.stdout).slice(1).map((r) => r[0])).toEqual(['8', '9']);
    const none = await cli(relay, ['audit', '--after', String(entries.length)]);
    expect(none).toMatchObject({ code: 0, stdout: `No audit entries after ${entries.length}.\n` });
  });

  it('--jsonl prints one entry per line, exactly as the API returns it', async () => {
    const run = await cli(relay, ['audit', '--jsonl']);
    expect(run).toMatchObject({ code: 0, stderr: '' });
    const { entries, raw } = await apiLog(relay);
    const lines = run.stdout.split('\n');
    expect(lines.pop()).toBe(''); // every line ends with a newline, the last one too
    expect(lines).toHaveLength(entries.length);
    lines.forEach((line, i) => {
      expect(JSON.parse(line)).toEqual(entries[i]);
      expect(raw).toContain(line); // the relay's own bytes, not a re-ordered copy
    });
    expect((JSON.parse(lines[5]) as AuditEntry).actor).toEqual({ kind: 'agent', id: b.id });

    const later = await cli(relay, ['audit', '--jsonl', '--after', '8']);
    expect(later.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as AuditEntry).event)).toEqual(['session.permission']);
  });

  it('verify: ok with the number of entries, exit 0', async () => {
    const { entries } = await apiLog(relay);
    const run = await cli(relay, ['audit', 'verify']);
    expect(run).toMatchObject({ code: 0, stdout: `ok: ${entries.length} entries, the chain is intact\n`, stderr: '' });
    const json = await cli(relay, ['audit', 'verify', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ ok: true, entries: entries.length, problems: [] });
  });

  it('refuses an agent token (the log is the human\'s), a wrong token and an unreachable relay, exit 1', async () => {
    const port = await freePort();
    const [agent, agentVerify, wrong, gone] = await Promise.all([
      cli(relay, ['audit'], relay.sessions.agentToken(a.id)),
      cli(relay, ['audit', 'verify'], relay.sessions.agentToken(a.id)),
      cli(relay, ['audit', 'verify'], 'nope'),
      runCli(['audit'], { ASKRELAY_URL: `http://127.0.0.1:${port}`, ASKRELAY_TOKEN: 'test-token-0123456789abcdef' }, scratch),
    ]);
    expect(agent).toMatchObject({ code: 1, stdout: '' });
    expect(agent.stderr).toBe('askrelay audit: Only the human (the relay token) can do this; an agent token cannot.\n');
    expect(agentVerify.code).toBe(1);
    expect(agentVerify.stderr).toMatch(/^askrelay audit: Only the human/);

    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/^askrelay audit: the relay refused the token from ASKRELAY_TOKEN; use the token "askrelay serve" printed/);

    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(new RegExp(`^askrelay audit: cannot reach the relay at http://127\\.0\\.0\\.1:${port}/ \\(.*\\); is "askrelay serve" running there\\?`));
  });

  it('explains its flags: --help, a bad --after, an unknown subcommand', async () => {
    const [help, top, bad, sub, mixed] = await Promise.all([
      runCli(['audit', '--help'], {}, scratch),
      runCli(['--help'], {}, scratch),
      cli(relay, ['audit', '--after', 'yesterday']),
      cli(relay, ['audit', 'check']),
      cli(relay, ['audit', 'verify', '--jsonl']),
    ]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^askrelay audit — /);
    expect(help.stdout).toContain('askrelay audit verify');
    expect(help.stdout).toContain('--jsonl');
    expect(top.stdout).toMatch(/\n {2}audit +print the audit log/);

    expect(bad).toMatchObject({ code: 1, stdout: '' });
    expect(bad.stderr).toBe('askrelay audit: --after takes a sequence number (a whole number, 0 or more), not "yesterday".\n');
    expect(sub.code).toBe(1);
    expect(sub.stderr).toMatch(/^askrelay audit: unexpected argument "check"; the subcommands are "head" and "verify"/);
    expect(mixed.code).toBe(1);
    expect(mixed.stderr).toMatch(/--jsonl and --after are for listing the log/);
  });
});

describe('askrelay audit on a long log', { timeout: 120_000 }, () => {
  it('pages through GET /api/audit until there is no next page', async () => {
    const own = await startTestRelay();
    try {
      // More than one page (the relay's pages hold 1000 entries): one entry per card.
      const total = 1234;
      for (let i = 0; i < total; i++) await own.relay.create({ questions: [{ text: `Question ${i}?`, options: ['A', 'B'] }] });

      const run = await cli(own, ['audit', '--jsonl']);
      expect(run.code).toBe(0);
      const seqs = run.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as AuditEntry).seq);
      expect(seqs).toEqual(Array.from({ length: total }, (_, i) => i + 1));

      const table = await cli(own, ['audit', '--after', '1200']);
      const rows = rowsOf(table.stdout);
      expect(rows).toHaveLength(1 + total - 1200);
      expect(rows.at(-1)![0]).toBe(String(total));

      const verify = await cli(own, ['audit', 'verify']);
      expect(verify).toMatchObject({ code: 0, stdout: `ok: ${total} entries, the chain is intact\n` });
    } finally {
      await own.stop();
    }
  });
});

// Two-node mode (ASKRELAY_TEST_NODES=2) keeps the log in PostgreSQL: there is no SQLite file to
// tamper with (the store tests check the chain on both stores).
describe.skipIf(process.env.ASKRELAY_TEST_NODES === '2')('askrelay audit verify after the SQLite file was tampered with', { timeout: 60_000 }, () => {
  /** A relay with a short log: three cards asked, one answered, one skipped (5 entries). */
  async function relayWithLog(): Promise<TestRelay> {
    const own = await startTestRelay();
    const one = await create(own, question('One?'));
    await create(own, question('Two?'));
    const three = await create(own, question('Three?'));
    expect((await own.api(`/api/cards/${one.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['A'] } } } })).status).toBe(200);
    expect((await own.api(`/api/cards/${three.id}/skip`, { method: 'POST' })).status).toBe(200);
    const ok = await cli(own, ['audit', 'verify']);
    expect(ok).toMatchObject({ code: 0, stdout: 'ok: 5 entries, the chain is intact\n' });
    return own;
  }

  /** Changes the relay's own file behind its back, as someone with access to the disk would. */
  function tamper(own: TestRelay, sql: string): void {
    const db = new Database(join(own.dataDir, DB_FILE));
    try {
      expect(db.prepare(sql).run().changes).toBe(1);
    } finally {
      db.close();
    }
  }

  it('an edited entry: exit 1, the entry named', async () => {
    const own = await relayWithLog();
    try {
      // Someone rewrites who answered card one: the human, from the page instead of the API.
      tamper(own, `UPDATE audit SET data = json_set(data, '$.surface', 'web') WHERE seq = 4`);
      const run = await cli(own, ['audit', 'verify']);
      expect(run).toMatchObject({ code: 1, stderr: '' });
      expect(run.stdout).toBe('entry 4 was edited\nbroken: 1 problem in 5 entries; the log was changed after it was written\n');

      const json = await cli(own, ['audit', 'verify', '--json']);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toEqual({ ok: false, entries: 5, problems: ['entry 4 was edited'] });

      // The log itself still prints, with the edited value: the table is what is stored.
      const list = await cli(own, ['audit']);
      expect(list.code).toBe(0);
      expect(rowsOf(list.stdout)[4].slice(2, 6)).toEqual(['card.answered', expect.any(String), 'human:operator', 'web']);
    } finally {
      await own.stop();
    }
  });

  it('a removed entry: exit 1, the missing entry named', async () => {
    const own = await relayWithLog();
    try {
      tamper(own, 'DELETE FROM audit WHERE seq = 2');
      const run = await cli(own, ['audit', 'verify']);
      expect(run.code).toBe(1);
      const lines = run.stdout.trimEnd().split('\n');
      expect(lines.slice(0, -1)).toEqual([expect.stringMatching(/^entr(y|ies) 2\b.* removed$/)]); // "entry 2 was removed", as the relay words it
      expect(lines.at(-1)).toBe('broken: 1 problem in 4 entries; the log was changed after it was written');
    } finally {
      await own.stop();
    }
  });

  it('a removed last entry: exit 1, the missing tail named', async () => {
    const own = await relayWithLog();
    try {
      tamper(own, 'DELETE FROM audit WHERE seq = 5');
      const run = await cli(own, ['audit', 'verify']);
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(/^entries after 4 \(up to 5\) were removed\n/);
    } finally {
      await own.stop();
    }
  });
});

describe('askrelay audit head, and verify against a pinned head', { timeout: 60_000 }, () => {
  /** A relay with a short log: three cards asked, one answered, one skipped (5 entries). */
  async function relayWithLog(env: Record<string, string> = {}, dataDir?: string): Promise<TestRelay> {
    const own = await startTestRelay(env, dataDir);
    const one = await create(own, question('One?'));
    await create(own, question('Two?'));
    const three = await create(own, question('Three?'));
    expect((await own.api(`/api/cards/${one.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['A'] } } } })).status).toBe(200);
    expect((await own.api(`/api/cards/${three.id}/skip`, { method: 'POST' })).status).toBe(200);
    return own;
  }

  function tamper(own: TestRelay, ...sql: string[]): void {
    const db = new Database(join(own.dataDir, DB_FILE));
    try {
      for (const statement of sql) db.exec(statement);
    } finally {
      db.close();
    }
  }

  it('head prints SEQ:HASH of the last entry and how to use it; --json as the relay returns it', async () => {
    const own = await relayWithLog();
    try {
      const { entries } = await apiLog(own);
      const last = entries.at(-1)!;
      expect(last).toMatchObject({ seq: 5, alg: 'hmac-sha256' }); // the relay keys its log
      const run = await cli(own, ['audit', 'head']);
      expect(run).toMatchObject({ code: 0, stderr: '' });
      expect(run.stdout).toBe(
        `5:${last.hash}\n` +
          `Entry 5 is the last of the audit log. Keep this line where the relay's host cannot change it; "askrelay audit verify --head 5:${last.hash}" checks later that the log still holds it.\n`,
      );
      const json = await cli(own, ['audit', 'head', '--json']);
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual({ seq: 5, hash: last.hash });
      expect(await (await own.api('/api/audit/head')).json()).toEqual({ seq: 5, hash: last.hash });
    } finally {
      await own.stop();
    }
  });

  // Two-node mode (ASKRELAY_TEST_NODES=2): tampers with the SQLite file.
  it.skipIf(process.env.ASKRELAY_TEST_NODES === '2')('verify --head: ok while the log holds the pin; the tail deleted and the head rewritten fails, exit 1', async () => {
    const own = await relayWithLog();
    try {
      const pin = (await cli(own, ['audit', 'head'])).stdout.split('\n')[0];
      const ok = await cli(own, ['audit', 'verify', '--head', pin]);
      expect(ok).toMatchObject({ code: 0, stdout: 'ok: 5 entries, the chain is intact and still holds the pinned head (entry 5)\n' });

      tamper(own, 'DELETE FROM audit WHERE seq > 3', 'UPDATE audit_head SET seq = 3, hash = (SELECT hash FROM audit WHERE seq = 3)');
      // What is left is a genuine, shorter chain: without the pin nothing shows.
      expect(await cli(own, ['audit', 'verify'])).toMatchObject({ code: 0, stdout: 'ok: 3 entries, the chain is intact\n' });
      const run = await cli(own, ['audit', 'verify', '--head', pin]);
      expect(run).toMatchObject({ code: 1, stderr: '' });
      expect(run.stdout).toBe(
        'the log ends at entry 3, before the pinned head (entry 5): entries were removed\nbroken: 1 problem in 3 entries; the log was changed after it was written\n',
      );
      const json = await cli(own, ['audit', 'verify', '--head', pin, '--json']);
      expect(json.code).toBe(1);
      expect(JSON.parse(json.stdout)).toEqual({ ok: false, entries: 3, problems: ['the log ends at entry 3, before the pinned head (entry 5): entries were removed'] });
    } finally {
      await own.stop();
    }
  });

  // Two-node mode (ASKRELAY_TEST_NODES=2): tampers with the SQLite file.
  it.skipIf(process.env.ASKRELAY_TEST_NODES === '2')('an entry edited and every later hash recomputed with plain SHA-256 fails verify', async () => {
    const own = await relayWithLog();
    try {
      const { entries } = await apiLog(own);
      // The forger rewrites who answered card one, and re-chains everything after it.
      let prev = entries[2].hash;
      const statements = entries.slice(3).map((entry) => {
        const { hash: _h, alg: _a, keyId: _k, ...fields } = entry;
        const forged = { ...fields, prevHash: prev, ...(entry.seq === 4 ? { surface: 'web' } : {}) };
        const hash = hashEntry(forged);
        prev = hash;
        return `UPDATE audit SET data = '${JSON.stringify({ ...forged, hash })}', prev_hash = '${forged.prevHash}', hash = '${hash}' WHERE seq = ${entry.seq}`;
      });
      tamper(own, ...statements, `UPDATE audit_head SET hash = '${prev}'`);
      const run = await cli(own, ['audit', 'verify']);
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('entry 4 is not keyed\nentry 5 is not keyed\nbroken: 2 problems in 5 entries; the log was changed after it was written\n');
    } finally {
      await own.stop();
    }
  });

  // Two-node mode (ASKRELAY_TEST_NODES=2): writes the older log into a SQLite file.
  it.skipIf(process.env.ASKRELAY_TEST_NODES === '2')('an older, unkeyed log keeps verifying: the relay keys it from the next entry on and says so', async () => {
    const data = mkdtempSync(join(scratch, 'older-'));
    const older = new SqliteStore(join(data, DB_FILE)); // a relay from before the audit key
    for (let i = 1; i <= 3; i++) older.audit.append({ at: new Date().toISOString(), event: 'card.created', cardId: `c_${i}`, actor: { kind: 'human', id: 'operator' }, surface: 'api' });
    older.close();
    const own = await relayWithLog({}, data);
    try {
      expect(own.notices).toContain('The audit log is keyed from entry 4 on; the 3 entries before it stay plain SHA-256 and are checked as such.');
      const { entries } = await apiLog(own);
      expect(entries.map((e) => e.alg ?? 'sha256')).toEqual(['sha256', 'sha256', 'sha256', 'hmac-sha256', 'hmac-sha256', 'hmac-sha256', 'hmac-sha256', 'hmac-sha256', 'hmac-sha256']);
      expect(entries[3]).toMatchObject({ event: 'audit.keyed', actor: { kind: 'system', id: 'relay' } });
      expect(await cli(own, ['audit', 'verify'])).toMatchObject({ code: 0, stdout: 'ok: 9 entries, the chain is intact\n' });
      const table = rowsOf((await cli(own, ['audit'])).stdout);
      expect(table[4].slice(2)).toEqual(['audit.keyed', '-', 'system:relay', 'relay', `algorithm=hmac-sha256 keyId=${entries[3].keyId}`]);
    } finally {
      await own.stop();
    }
  });

  // Two-node mode (ASKRELAY_TEST_NODES=2): reads and removes <data>/audit.key, which nodes on PostgreSQL never make.
  it.skipIf(process.env.ASKRELAY_TEST_NODES === '2')('a lost audit key: a new one is made and said so, and verify names the entries it cannot check', async () => {
    const data = mkdtempSync(join(scratch, 'lost-key-'));
    const first = await relayWithLog({}, data);
    const oldKey = readFileSync(join(data, 'audit.key'), 'utf8').trim();
    const firstId = (await apiLog(first)).entries[0].keyId;
    await first.stop();
    rmSync(join(data, 'audit.key'));

    const second = await startTestRelay({}, data);
    try {
      const secondId = (await apiLog(second)).entries[5].keyId;
      expect(second.notices).toContain(`Made the audit key ${join(data, 'audit.key')}; the audit log is keyed with it from now on (keep it with your backups).`);
      expect(second.notices.join('\n')).toContain(`The audit log's last entry was keyed with another key (${firstId}), not this relay's (${secondId})`);
      const run = await cli(second, ['audit', 'verify']);
      expect(run.code).toBe(1);
      expect(run.stdout.split('\n')[0]).toBe(`entries 1-5 were keyed with another audit key (${firstId}), not this relay's (${secondId})`);
    } finally {
      await second.stop();
    }

    // The old key given back through ASKRELAY_AUDIT_KEY: the old entries verify again.
    const third = await startTestRelay({ ASKRELAY_AUDIT_KEY: oldKey }, data);
    try {
      const run = await cli(third, ['audit', 'verify', '--json']);
      const problems = (JSON.parse(run.stdout) as { problems: string[] }).problems;
      expect(problems.some((p) => p.startsWith('entries 1-5'))).toBe(false);
    } finally {
      await third.stop();
    }
  });

  it('explains --head: a malformed pin, --head where it does not belong', async () => {
    const [bad, onList, onHead, extra] = await Promise.all([
      cli(relay, ['audit', 'verify', '--head', '12']),
      cli(relay, ['audit', '--head', `1:${'a'.repeat(64)}`]),
      cli(relay, ['audit', 'head', '--head', `1:${'a'.repeat(64)}`]),
      cli(relay, ['audit', 'head', 'now']),
    ]);
    expect(bad).toMatchObject({ code: 1, stdout: '' });
    expect(bad.stderr).toBe('askrelay audit: --head takes SEQ:HASH as "askrelay audit head" prints it (a sequence number, a colon and 64 hex digits), not "12".\n');
    expect(onList.code).toBe(1);
    expect(onList.stderr).toMatch(/--head is for "audit verify"/);
    expect(onHead.code).toBe(1);
    expect(onHead.stderr).toMatch(/--head is for "audit verify"/);
    expect(extra.code).toBe(1);
    expect(extra.stderr).toMatch(/unexpected argument "now"/);
    const api = await relay.api('/api/audit/verify?head=nope');
    expect(api.status).toBe(400);
    expect((await api.json()).error.code).toBe('invalid_request');
  });
});
