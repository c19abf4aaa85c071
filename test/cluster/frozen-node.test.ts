import http from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startNodes, type RelayNodes } from '../support/relay-nodes.js';

// A node frozen for a while (SIGSTOP, a long pause) while requests wait on its idle kept-alive
// connections, as a load balancer's do: at the thaw it must answer them. With Node's default
// keep-alive (5 s) its timer ran out during the freeze and fired first, closing each
// connection with its request unread; behind HAProxy the client got a 502 (the chaos suite,
// bench/chaos/, found it). src/server/keep-alive.ts says why the node now waits longer.

const FREEZE_MS = 7_000; // longer than Node's default keep-alive, far shorter than the node's

let nodes: RelayNodes;
beforeAll(async () => {
  nodes = await startNodes(1);
});
afterAll(async () => {
  await nodes?.stop();
});

function health(agent: http.Agent): Promise<string> {
  return new Promise((resolve) => {
    const req = http.get(new URL('/api/health', nodes.url(0)), { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(`HTTP ${res.statusCode}`));
    });
    req.on('error', (err) => resolve(`error: ${err.message}`));
  });
}

it('answers, once it thaws, the requests sent on its idle kept-alive connections while it was frozen', async () => {
  // Ten connections, each opened by a first request and idle since.
  const agents = Array.from({ length: 10 }, () => new http.Agent({ keepAlive: true, maxSockets: 1 }));
  for (const agent of agents) expect(await health(agent)).toBe('HTTP 200');
  const { pid } = nodes.nodes[0];
  process.kill(pid, 'SIGSTOP');
  try {
    const waiting = agents.map((agent) => health(agent));
    await new Promise((r) => setTimeout(r, FREEZE_MS));
    process.kill(pid, 'SIGCONT');
    expect(await Promise.all(waiting)).toEqual(agents.map(() => 'HTTP 200'));
  } finally {
    process.kill(pid, 'SIGCONT');
    agents.forEach((a) => a.destroy());
  }
});
