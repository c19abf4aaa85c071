import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Card, CardInput } from '../src/cards/model.js';

// The real `askrelay serve` process is killed with SIGKILL (no shutdown code runs) and
// started again on the same data folder: every card comes back as it was, deadlines that
// passed while it was down are expired, answers given before the kill are still there,
// and an `askrelay ask` that was waiting across the crash gets its answer. The restarted relay's
// clock reads two minutes ahead (ASKRELAY_TEST_CLOCK_OFFSET), so a one-minute card's deadline
// passes while the relay is down without the test waiting for it.

const BIN = fileURLToPath(new URL('../bin/askrelay.js', import.meta.url));
const TOKEN = 'crash-token-0123456789abcdef';
const data = mkdtempSync(join(tmpdir(), 'askrelay-crash-'));
const children: ChildProcessWithoutNullStreams[] = [];

function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ASKRELAY_')));
}

function spawnCli(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: data, env: { ...cleanEnv(), ...env } });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    // 'close', not 'exit': only then has all of its output been read.
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, exited, output: () => ({ stdout, stderr }) };
}

/** Starts `askrelay serve` and resolves once it printed its URL and its data line. */
async function serve(port: number | '0', env: Record<string, string> = {}) {
  const server = spawnCli(['serve', '--port', String(port), '--data', data], { ASKRELAY_TOKEN: TOKEN, ASKRELAY_WAIT: '1h', ...env });
  for (let i = 0; i < 1200; i++) {
    const { stdout } = server.output();
    const url = /askrelay is running: (http:\/\/\S+)/.exec(stdout)?.[1];
    const dataLine = /^Data: .*$/m.exec(stdout)?.[0];
    if (url && dataLine) return { ...server, url, dataLine };
    if (server.child.exitCode !== null) throw new Error(`serve exited: ${JSON.stringify(server.output())}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`serve did not start: ${JSON.stringify(server.output())}`);
}

function api(base: string, path: string, init: { method?: string; json?: unknown } = {}) {
  return fetch(new URL(path, base), {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
}

async function create(base: string, input: CardInput): Promise<Card> {
  const res = await api(base, '/api/cards', { method: 'POST', json: input });
  expect(res.status).toBe(201);
  return (await res.json()) as Card;
}

const get = async (base: string, id: string) => (await (await api(base, `/api/cards/${id}`)).json()) as Card;

afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(data, { recursive: true, force: true });
});

describe('a relay killed with SIGKILL', { timeout: 60_000 }, () => {
  it('comes back with every card, expires the overdue one, keeps answers, and a waiting ask gets its answer', async () => {
    const first = await serve("0");
    expect(first.dataLine).toContain('(0 pending cards)');
    const base = first.url;

    const long: Card[] = [
      await create(base, { questions: [{ header: 'DB', text: 'Which database?', options: ['PostgreSQL', 'SQLite'] }], waitSeconds: 3600 }),
      await create(base, {
        title: 'Setup',
        questions: [
          { id: 'langs', text: 'Languages?', options: [{ label: 'TS', description: 'TypeScript' }, 'Go', 'Rust'], multiSelect: true },
          { id: 'name', text: 'Project name?' },
        ],
        waitSeconds: 7200,
      }),
      await create(base, { layout: 'form', questions: [{ id: 'size', text: 'Size?', options: ['S', 'M', 'L'] }] }),
    ];
    const done = await create(base, { questions: [{ text: 'Ship it?', options: ['Yes', 'No'] }], waitSeconds: 3600 });
    const answered = await api(base, `/api/cards/${done.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Yes'], text: 'today' } } } });
    expect(answered.status).toBe(200);

    // A script waiting on a card of its own, through the real CLI.
    const asking = spawnCli(['ask', 'Across the crash?', '-c', 'Alpha', '-c', 'Beta'], { ASKRELAY_URL: base, ASKRELAY_TOKEN: TOKEN });
    let askCard: Card | undefined;
    for (let i = 0; i < 1200 && !askCard; i++) {
      const { cards } = (await (await api(base, '/api/cards?status=pending')).json()) as { cards: Card[] };
      askCard = cards.find((c) => c.questions[0].text === 'Across the crash?');
      if (!askCard) await new Promise((r) => setTimeout(r, 25));
    }
    expect(askCard).toBeDefined();

    // Its deadline passes while the relay is down: the restarted relay's clock is two minutes on.
    const short = await create(base, { questions: [{ text: 'Quick?', options: ['Yes', 'No'] }], waitSeconds: 60 });
    expect((await get(base, short.id)).status).toBe('pending');

    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await serve(Number(new URL(base).port), { ASKRELAY_TEST_CLOCK_OFFSET: '2m' });
    expect(second.url).toBe(base);
    expect(second.dataLine).toContain('(4 pending cards, 1 expired while stopped)');

    for (const card of long) {
      const back = await get(base, card.id);
      expect(back).toMatchObject({ id: card.id, status: 'pending', questions: card.questions, expiresAt: card.expiresAt, createdAt: card.createdAt });
    }
    const answers = [
      { q1: { selected: ['SQLite'] } },
      { langs: { selected: ['TS', 'Rust'] }, name: { selected: [], text: 'askrelay' } },
      { size: { selected: ['M'] } },
    ];
    for (const [i, card] of long.entries()) {
      const res = await api(base, `/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: answers[i] } });
      expect(res.status).toBe(200);
      expect(await get(base, card.id)).toMatchObject({ status: 'answered', answer: answers[i] });
    }

    expect(await get(base, short.id)).toMatchObject({ status: 'expired', expiresAt: short.expiresAt });
    const late = await api(base, `/api/cards/${short.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Yes'] } } } });
    expect(late.status).toBe(410);

    expect(await get(base, done.id)).toMatchObject({ status: 'answered', answer: { q1: { selected: ['Yes'], text: 'today' } } });

    const res = await api(base, `/api/cards/${askCard!.id}/answer`, { method: 'POST', json: { answers: { q1: { selected: ['Beta'] } } } });
    expect(res.status).toBe(200);
    const asked = await asking.exited;
    expect(asked).toMatchObject({ code: 0, stdout: 'Beta\n' });
    expect(asked.stderr).toContain('lost the relay');

    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);
  });
});
