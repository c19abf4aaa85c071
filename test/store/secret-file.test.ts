import { chmodSync, linkSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AUDIT_KEY_FILE, TOKEN_FILE, loadOrCreateAuditKey, loadOrCreateToken, openDataFolder } from '../../src/store/data-folder.js';
import { loadOrCreateVapidKeys } from '../../src/push/vapid-keys.js';
import { createSecretFile, privateFolder, writeSecretFile } from '../../src/store/secret-file.js';

// The data folder's secret files on a real temporary folder, with the umask at 0 so that
// nothing but the code decides a mode.

const scratch = mkdtempSync(join(tmpdir(), 'askrelay-secret-file-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let dir: string;
let umask: number;
let n = 0;
beforeEach(() => {
  dir = join(scratch, `case-${++n}`);
  mkdirSync(dir, { mode: 0o700 });
  umask = process.umask(0);
});
afterEach(() => process.umask(umask));

const mode = (path: string) => statSync(path).mode & 0o777;

describe('writeSecretFile', () => {
  it('replaces the file through a rename: one holding the old file keeps the old bytes, no temporary is left', () => {
    const file = join(dir, 'secret');
    writeFileSync(file, 'old secret\n', { mode: 0o644 });
    linkSync(file, join(dir, 'held')); // a second name for the old file (its inode)
    writeSecretFile(file, 'new secret\n');
    expect(readFileSync(file, 'utf8')).toBe('new secret\n');
    expect(readFileSync(join(dir, 'held'), 'utf8')).toBe('old secret\n'); // written in place, this would be the new one
    expect(mode(file)).toBe(0o600);
    expect(readdirSync(dir).sort()).toEqual(['held', 'secret']);
  });

  it('a write that cannot finish leaves the old file and no temporary', () => {
    const file = join(dir, 'secret');
    mkdirSync(file); // renaming a file over a folder fails
    expect(() => writeSecretFile(file, 'x')).toThrow();
    expect(readdirSync(dir)).toEqual(['secret']);
  });
});

describe('createSecretFile', () => {
  it('creates the file 0600, and never replaces one that is there', () => {
    const file = join(dir, 'key');
    expect(createSecretFile(file, 'first\n')).toBe(true);
    expect(mode(file)).toBe(0o600);
    expect(createSecretFile(file, 'second\n')).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('first\n');
    expect(readdirSync(dir)).toEqual(['key']);
  });
});

describe('privateFolder', () => {
  it('makes a missing folder 0700 and says nothing; tightens an open one and returns its mode', () => {
    const fresh = join(dir, 'a', 'b');
    expect(privateFolder(fresh)).toBeUndefined();
    expect(mode(fresh)).toBe(0o700);
    chmodSync(fresh, 0o750);
    expect(privateFolder(fresh)).toBe(0o750);
    expect(mode(fresh)).toBe(0o700);
    expect(openDataFolder(fresh)).toBeUndefined();
    chmodSync(fresh, 0o777);
    expect(openDataFolder(fresh)).toBe(`The data folder ${fresh} was open to other users (mode 0777); it is now 0700.`);
  });
});

describe('the relay token', () => {
  it('is made on first start (0600, 32 characters) and read back after', () => {
    const made = loadOrCreateToken(dir);
    expect(made.notice).toBeUndefined();
    expect(made.value).toMatch(/^[\w-]{32}$/);
    expect(mode(join(dir, TOKEN_FILE))).toBe(0o600);
    expect(loadOrCreateToken(dir)).toEqual({ value: made.value });
  });

  it('ASKRELAY_TOKEN wins when long enough; a short one is refused by name', () => {
    expect(loadOrCreateToken(dir, 'y'.repeat(24))).toEqual({ value: 'y'.repeat(24) });
    expect(() => loadOrCreateToken(dir, 'y'.repeat(23))).toThrow(/^ASKRELAY_TOKEN is 23 characters long; the relay needs a token of at least 24 characters\./);
    expect(readdirSync(dir)).toEqual([]); // the variable's token is never written down
  });
});

describe('the audit key', () => {
  it('is made on first start (0600) and said so, then read back', () => {
    const made = loadOrCreateAuditKey(dir);
    const file = join(dir, AUDIT_KEY_FILE);
    expect(made.notice).toBe(`Made the audit key ${file}; the audit log is keyed with it from now on (keep it with your backups).`);
    expect(made.value.length).toBe(43);
    expect(mode(file)).toBe(0o600);
    expect(loadOrCreateAuditKey(dir)).toEqual({ value: made.value });
  });

  it('ASKRELAY_AUDIT_KEY wins; a short one, or an empty or short file, is refused and the file kept', () => {
    expect(loadOrCreateAuditKey(dir, 'k'.repeat(24)).value).toEqual(Buffer.from('k'.repeat(24)));
    expect(() => loadOrCreateAuditKey(dir, 'short')).toThrow(/^ASKRELAY_AUDIT_KEY is 5 characters long; the relay needs a key of at least 24 characters\./);
    const file = join(dir, AUDIT_KEY_FILE);
    writeFileSync(file, '\n');
    expect(() => loadOrCreateAuditKey(dir)).toThrow(`the audit key in ${file} is 0 characters long; the relay needs a key of at least 24 characters. Put the key back from a backup`);
    expect(readFileSync(file, 'utf8')).toBe('\n');
  });
});

describe('the VAPID keys', () => {
  it('are made 0600 through the same helper; a cut file is named, not a JSON error', () => {
    const keys = loadOrCreateVapidKeys(dir);
    expect(mode(join(dir, 'vapid.json'))).toBe(0o600);
    expect(loadOrCreateVapidKeys(dir)).toEqual(keys);
    writeFileSync(join(dir, 'vapid.json'), '{"publicKey": "BC');
    expect(() => loadOrCreateVapidKeys(dir)).toThrow(`${join(dir, 'vapid.json')} does not hold a VAPID key pair`);
  });
});
