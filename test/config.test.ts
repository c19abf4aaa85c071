import { describe, expect, it } from 'vitest';
import { parseDuration, serveConfig } from '../src/config.js';

describe('parseDuration', () => {
  it.each([
    ['8h', 8 * 3_600_000],
    ['90m', 90 * 60_000],
    ['2s', 2000],
    ['500ms', 500],
    ['1h30m', 5_400_000],
    ['1.5s', 1500],
    ['45', 45_000],
    ['2d', 172_800_000],
  ])('%s is %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', 'soon', '8 hours', '-1s', '0s', '5x', 'h'])('refuses %j', (text) => {
    expect(() => parseDuration(text)).toThrow(/duration/);
  });
});

describe('serveConfig', () => {
  it('defaults serve a newcomer', () => {
    const config = serveConfig({}, {});
    expect(config).toMatchObject({ port: 7070, host: '127.0.0.1', waitMs: 8 * 3_600_000 });
    expect(config.dataDir).toMatch(/\.askrelay$/);
    expect(config.token).toBeUndefined();
  });

  it('reads the environment, and flags win over it', () => {
    const env = { ASKRELAY_PORT: '8080', ASKRELAY_DATA: '/tmp/x', ASKRELAY_TOKEN: ' t ', ASKRELAY_WAIT: '90m', ASKRELAY_WAIT_EXTENSION: '2s' };
    expect(serveConfig({}, env)).toMatchObject({ port: 8080, dataDir: '/tmp/x', token: 't', waitMs: 5_400_000 });
    expect(serveConfig({ port: '9090', data: '/tmp/y' }, env)).toMatchObject({ port: 9090, dataDir: '/tmp/y' });
  });

  it('reads ASKRELAY_AUDIT_KEY, trimmed; unset or blank leaves it to <data>/audit.key', () => {
    expect(serveConfig({}, { ASKRELAY_AUDIT_KEY: ' an audit key of enough characters \n' }).auditKey).toBe('an audit key of enough characters');
    expect(serveConfig({}, { ASKRELAY_AUDIT_KEY: '  ' }).auditKey).toBeUndefined();
    expect(serveConfig({}, {}).auditKey).toBeUndefined();
  });

  it('names the variable that is wrong', () => {
    expect(() => serveConfig({}, { ASKRELAY_WAIT: 'forever' })).toThrow(/^ASKRELAY_WAIT: /);
    expect(() => serveConfig({}, { ASKRELAY_PORT: 'http' })).toThrow(/not a port/);
  });
});
