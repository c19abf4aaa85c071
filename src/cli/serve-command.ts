import { parseArgs } from 'node:util';
import { serveConfig } from '../config.js';
import { registry, startRelay, type RunningRelay } from '../start.js';

/**
 * Started by an npm script (`npm start`), the relay stops when npm goes: npm passes a
 * SIGTERM on to it (the script execs the relay), but a killed npm passes on nothing, and the
 * relay would run on orphaned, holding the port. Its parent changing says npm is gone.
 * Anything else that starts the relay (a shell with nohup, a supervisor) may well go first.
 */
function watchStarter(stop: () => void): () => void {
  if (!process.env.npm_lifecycle_event) return () => {};
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid !== parent) stop();
  }, 500);
  timer.unref();
  return () => clearInterval(timer);
}

/** The engines' own card waits, as the registry declares them (src/cli never imports providers/). */
const engineWaits = registry.waits.map((w) => `;\n${w.variable} (default ${w.default}) on ${w.engines.join(', ')}`).join('');

export const SERVE_HELP = `askrelay serve — run the relay: its HTTP API, the web page and the card store

Usage: askrelay serve [--port N] [--host ADDR] [--data DIR] [--database URL] [--approve-tools]

  --port N      port to listen on (env ASKRELAY_PORT, default 7070; 0 picks a free one)
  --host ADDR   address to bind (env ASKRELAY_HOST, default 127.0.0.1)
  --data DIR    folder for the SQLite file and the token (env ASKRELAY_DATA, default ./.askrelay)
  --database URL
                a postgres:// URL (env ASKRELAY_DATABASE_URL): keep everything in PostgreSQL
                instead of the SQLite file; any number of nodes may share one database
                (see docs/deploy.md). ASKRELAY_NODE_ID names this node (default host:port),
                ASKRELAY_LEASE is how long a dead node's work waits to move (default 15s).
  --approve-tools
                approve every tool permission an agent asks for (shell commands, file
                writes, …) without an approval card (env ASKRELAY_APPROVE_TOOLS=1).
                Without it each one is an approval card that only a human can answer.

Environment: ASKRELAY_TOKEN (at least 24 characters; else one is made on first start and
kept in <data>/token), ASKRELAY_AUDIT_KEY (the audit log's key, at least 24 characters; else
<data>/audit.key, made on first start). The data folder is kept 0700 and its files 0600.
One relay per data folder: a second one is refused; the folder is free again the moment its
relay's process ends, however it ended (see docs/deploy.md, "Under a supervisor").
Card waits: ASKRELAY_WAIT (default 8h)${engineWaits}.
Chat channels (Telegram, Slack, Discord, Mattermost): ASKRELAY_<CHANNEL>_TOKEN and friends,
or a JSON file (ASKRELAY_CHANNELS, default <data>/channels.json); see docs/channels.md.`;

export async function serveCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { port: { type: 'string' }, host: { type: 'string' }, data: { type: 'string' }, database: { type: 'string' }, 'approve-tools': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    strict: true,
  });
  if (values.help) {
    console.log(SERVE_HELP);
    return 0;
  }
  const config = serveConfig({ port: values.port, host: values.host, data: values.data, database: values.database, approveTools: values['approve-tools'] });
  // Listening for the signals before anything starts: a supervisor's SIGTERM while the
  // relay starts (its health check may already answer) stops it once started, cleanly,
  // instead of killing it with its leases held. A second signal while it still starts (a
  // start stuck on an unreachable database) ends the process at once, as a second Ctrl+C
  // does while it stops.
  let running: RunningRelay | undefined;
  let signalled = false;
  let stopped!: () => void;
  const done = new Promise<void>((resolve) => (stopped = resolve));
  const quiet = () => {
    unwatch();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  };
  function stop() {
    if (running) {
      quiet();
      void running.close().then(stopped);
    } else if (signalled) process.exit(1);
    else signalled = true;
  }
  const unwatch = watchStarter(stop);
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    running = await startRelay(config);
  } catch (err) {
    quiet();
    throw err;
  }
  if (signalled) {
    stop();
    await done;
    return 0;
  }
  const { expired, pending } = running.recovered;
  console.log(`askrelay is running: ${running.url}`);
  console.log(`Token: ${running.token}`);
  for (const notice of running.notices) console.log(notice);
  console.log(`Data: ${config.dataDir} (${pending} pending card${pending === 1 ? '' : 's'}${expired ? `, ${expired} expired while stopped` : ''})`);
  for (const line of running.channels.describe()) console.log(`Channel ${line}`);
  console.log('Open the page, paste the token once; press Ctrl+C to stop.');

  await done;
  return 0;
}
