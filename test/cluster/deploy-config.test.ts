import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { KEEP_ALIVE_MS } from '../../src/server/keep-alive.js';
import { HAPROXY, haproxyConfig } from '../support/load-balancer.js';

// docs/deploy.md gives operators the HAProxy configuration the cluster tests run: the copy
// in the docs must be that one (for port 7070 and three nodes), and HAProxy must accept it.

const DEPLOY = new URL('../../docs/deploy.md', import.meta.url);

function haproxyBlock(): string {
  const match = /```haproxy\n([\s\S]*?)```/.exec(readFileSync(DEPLOY, 'utf8'));
  if (!match) throw new Error('docs/deploy.md has no ```haproxy block');
  return match[1];
}

describe('the HAProxy configuration in docs/deploy.md', () => {
  it('is the one the cluster tests run, for port 7070 and three nodes', () => {
    expect(haproxyBlock()).toBe(haproxyConfig({ bind: ':7070', servers: ['10.0.0.11:7070', '10.0.0.12:7070', '10.0.0.13:7070'] }));
  });

  it('closes idle connections to the nodes before a node would (src/server/keep-alive.ts)', () => {
    const config = haproxyBlock();
    const idle = /^\s*timeout http-keep-alive (\d+)s$/m.exec(config);
    expect(idle, 'timeout http-keep-alive in seconds').not.toBeNull();
    // Each connection to a node stays with its client's, which the keep-alive timeout closes.
    expect(config).toMatch(/^\s*http-reuse never$/m);
    expect(Number(idle![1]) * 1000).toBeLessThan(KEEP_ALIVE_MS);
  });

  it('is accepted by HAProxy as it stands', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'askrelay-deploy-'));
    try {
      const file = join(dir, 'haproxy.cfg');
      writeFileSync(file, haproxyBlock());
      // -c: check the configuration and exit, without binding or resolving anything.
      const { stdout, stderr } = await promisify(execFile)(HAPROXY, ['-c', '-f', file]);
      expect(`${stdout}${stderr}`).toContain('Configuration file is valid');
      expect(stderr).not.toMatch(/WARNING|ALERT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
