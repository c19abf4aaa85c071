import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diesWithTest } from './child-guard.js';
import { freePort } from './cli.js';
import { waitUntil } from './wait-until.js';

// A real HAProxy (Debian's, installed by scripts/ensure-test-tools.js) in front of relay
// nodes, configured as docs/deploy.md tells operators to: health-checked on /api/health, a
// dead node dropped after two failed checks half a second apart, a refused connection sent
// to another node at once, an MCP session kept on its node, and long-lived streams (SSE,
// long polls, MCP) never cut.

export const HAPROXY = process.env.HAPROXY_PATH ?? '/usr/sbin/haproxy';

export interface HaproxyConfigOptions {
  /** Where the balancer listens, e.g. 127.0.0.1:7070 or :7070. */
  bind: string;
  /** The nodes, as host:port. */
  servers: string[];
  balance?: 'roundrobin' | 'leastconn';
  /** A unix socket for `show stat` (tests ask it which nodes are up). */
  statsSocket?: string;
}

/** The configuration docs/deploy.md shows (test/cluster/deploy-config.test.ts checks they agree). */
export function haproxyConfig({ bind, servers, balance = 'roundrobin', statsSocket }: HaproxyConfigOptions): string {
  return [
    'global',
    '    maxconn 4096',
    ...(statsSocket ? [`    stats socket ${statsSocket} mode 600 level admin`] : []),
    '',
    'defaults',
    '    mode http',
    '    timeout connect 1s',
    '    timeout http-request 10s',
    "    # The balancer, never a node, closes an idle connection: a client's after 10 s, and with",
    "    # it the one to its node (http-reuse never keeps each with its client's). A node keeps",
    '    # one open for 75 s, so no request is sent on a connection the node is closing.',
    '    timeout http-keep-alive 10s',
    '    http-reuse never',
    '    # A health check may take this long: a node busy for a moment is not taken out.',
    '    timeout check 2s',
    '    # Event streams (/api/events), MCP calls waiting on a card and long polls',
    '    # (/api/cards/:id/wait, up to an hour of silence) stay open: never cut them first.',
    '    timeout client 2h',
    '    timeout server 2h',
    '    timeout tunnel 2h',
    '    # A node that refuses the connection (it died): try another one at once.',
    '    option redispatch 1',
    '    retries 3',
    '',
    'frontend askrelay',
    `    bind ${bind}`,
    '    default_backend askrelay_nodes',
    '',
    'backend askrelay_nodes',
    `    balance ${balance}`,
    '    option httpchk GET /api/health',
    '    http-check expect status 200',
    '    # Two failed checks half a second apart take a node out; one good check brings it back.',
    '    default-server inter 500ms fall 2 rise 1',
    '    # An MCP session (/mcp, header Mcp-Session-Id) lives on the node that opened it: send',
    '    # each of its requests there. When that node is down the request goes elsewhere, gets',
    '    # 404, and the client opens a new session and re-sends its call.',
    '    stick-table type string len 64 size 100k expire 2h',
    '    stick on req.hdr(mcp-session-id)',
    '    stick store-response res.hdr(mcp-session-id)',
    ...servers.map((server, i) => `    server node-${i} ${server} check`),
    '',
  ].join('\n');
}

export interface BackendState {
  /** node-<i>, in the order the backends were given. */
  name: string;
  /** HAProxy's word: UP, DOWN, "UP 1/2", "DOWN 1/1", MAINT, … */
  status: string;
}

export interface LoadBalancer {
  url: string;
  port: number;
  configFile: string;
  /** What HAProxy printed, for assertion messages. */
  output(): string;
  /** HAProxy's view of each node, from its stats socket. */
  backends(): Promise<BackendState[]>;
  /** Which node each MCP session id is kept on (node-<i>), from HAProxy's stick table. */
  mcpSessions(): Promise<Map<string, string>>;
  stop(): Promise<void>;
}

export interface LoadBalancerOptions {
  balance?: 'roundrobin' | 'leastconn';
  readyMs?: number;
  /**
   * Wait until every backend passed its first health check (true by default). Until then
   * HAProxy shows a node as "UP 1/2": up, but one failed check from being taken out.
   */
  checked?: boolean;
}

function hostPort(url: string): string {
  const { hostname, port } = new URL(url);
  return `${hostname}:${port}`;
}

function ask(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const conn = connect(socket, () => conn.end(`${command}\n`));
    conn.setEncoding('utf8');
    conn.on('data', (d) => (text += d));
    conn.on('end', () => resolve(text));
    conn.on('error', reject);
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const conn = connect(port, '127.0.0.1', () => {
      conn.destroy();
      resolve(true);
    });
    conn.on('error', () => resolve(false));
  });
}

/** Starts HAProxy on a free loopback port in front of `backends` (node URLs) and waits until it accepts. */
export async function startLoadBalancer(backends: string[], options: LoadBalancerOptions = {}): Promise<LoadBalancer> {
  const dir = mkdtempSync(join(tmpdir(), 'askrelay-haproxy-'));
  const statsSocket = join(dir, 'admin.sock');
  const configFile = join(dir, 'haproxy.cfg');
  // The port was free a moment ago; another process may take it before HAProxy binds, so try again.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    writeFileSync(configFile, haproxyConfig({ bind: `127.0.0.1:${port}`, servers: backends.map(hostPort), balance: options.balance, statsSocket }));
    // -db: in the foreground, not daemonised, so the test owns the process and its output.
    const child = spawn(...diesWithTest(HAPROXY, ['-db', '-f', configFile]), { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    let gone = false;
    void exited.then(() => (gone = true));
    child.on('error', (err) => (out += `${err.message}\n`));
    const stop = async () => {
      if (!gone) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(timer);
    };
    try {
      await waitUntil(
        async () => {
          if (gone) throw new Error(`haproxy exited:\n${out}`);
          // Listening, and its stats socket (backends()) answers too.
          return (await accepts(port)) && ask(statsSocket, 'show info').then(() => true, () => false);
        },
        `haproxy to listen on 127.0.0.1:${port}`,
        options.readyMs ?? 10_000,
      );
    } catch (err) {
      await stop();
      if (attempt < 3 && /cannot bind|Address already in use/i.test(out)) continue;
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`${(err as Error).message}\n--- haproxy ---\n${out}`);
    }
    const balancer: LoadBalancer = {
      url: `http://127.0.0.1:${port}/`,
      port,
      configFile,
      output: () => out,
      async backends() {
        // `show stat` is CSV: "# pxname,svname,…,status,…"; one row per server.
        const [head, ...rows] = (await ask(statsSocket, 'show stat')).trim().split('\n');
        const columns = head.replace(/^# /, '').split(',');
        const [px, sv, st] = ['pxname', 'svname', 'status'].map((c) => columns.indexOf(c));
        return rows
          .map((row) => row.split(','))
          .filter((cells) => cells[px] === 'askrelay_nodes' && cells[sv].startsWith('node-'))
          .map((cells) => ({ name: cells[sv], status: cells[st] }));
      },
      async mcpSessions() {
        // "0x…: key=<session id> use=0 exp=… server_id=1 server_key=node-0"
        const table = await ask(statsSocket, 'show table askrelay_nodes');
        return new Map([...table.matchAll(/key=(\S+) .*server_key=(\S+)/g)].map((m) => [m[1], m[2]]));
      },
      async stop() {
        await stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
    if (options.checked !== false) {
      await waitUntil(async () => (await balancer.backends()).every((b) => b.status === 'UP'), 'HAProxy to check every node', options.readyMs ?? 10_000).catch(
        async (err: Error) => {
          const states = JSON.stringify(await balancer.backends());
          await balancer.stop();
          throw new Error(`${err.message}: ${states}\n--- haproxy ---\n${out}`);
        },
      );
    }
    return balancer;
  }
}
