import { lockDataFolder } from '../../src/store/folder-lock.js';

// A relay's lock and nothing else, in a process of its own: the folder lock tests kill it
// the ways a relay dies (SIGKILL, left unreaped) and see whether the folder is free.

const lock = lockDataFolder(process.argv[2]!);
process.stdout.write(`locked ${process.pid}\n`);
process.on('SIGTERM', () => {
  lock.release();
  process.exit(0);
});
setInterval(() => {}, 60_000);
