import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { serveConfig } from '../../src/config.js';
import { startRelay } from '../../src/start.js';

// The composition root reads every setting from the relay's configured environment (not
// process.env) before it opens anything: a bad one stops the start with its name, and leaves
// no data folder behind.

let parent: string;
afterEach(() => rmSync(parent, { recursive: true, force: true }));

it.each(['ASKRELAY_MCP_PROGRESS', 'ASKRELAY_MCP_GRACE', 'ASKRELAY_MCP_IDLE', 'ASKRELAY_WAIT_EXTENSION'])(
  'a bad %s in the relay environment stops the start before the data folder is made',
  async (name) => {
    parent = mkdtempSync(join(tmpdir(), 'askrelay-settings-'));
    const dataDir = join(parent, 'data');
    const config = serveConfig({ port: '0', data: dataDir }, { ASKRELAY_TOKEN: 'test-token-0123456789abcdef', [name]: 'a while' });
    await expect(startRelay(config)).rejects.toThrow(new RegExp(`^${name}: `));
    expect(existsSync(dataDir)).toBe(false);
  },
);
