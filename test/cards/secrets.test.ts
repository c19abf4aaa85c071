import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCredential, rememberSecret } from '../../src/cards/secrets.js';
import type { Card } from '../../src/cards/model.js';
import { startTestRelay, type TestRelay } from '../support/running-relay.js';

// Issue 13, item 9: what the credential check refuses and what it lets through, both ways.
// Text is normalised first (NFKC, invisible characters removed), so a key split by a
// zero-width space or written in fullwidth forms is still a key; the relay's own token and
// agent tokens are refused; ordinary prose about passwords and tokens is not.

const ANT = 'sk-ant-api03-Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz';
const AGENT = 'asa_q3Vh0-Jk1LmN2oPq3RsT4uVw5XyZ6aBc';
const RELAY_TOKEN = 'Rk3mVq9ZtW2pL8xN4cY7bH1s';
const PERSONAL = 'asp_Zq3Vh0-Jk1LmN2oPq3RsT4uVw5XyZ6aB';
const fullwidth = (text: string) => [...text].map((c) => (c >= '!' && c <= '~' ? String.fromCodePoint(c.codePointAt(0)! + 0xfee0) : c)).join('');

const REFUSE: [string, string, string][] = [
  ['an Anthropic key', `my key is ${ANT}`, 'an API key'],
  ['a key split by a zero-width space', `sk-ant-\u200bapi03-${ANT.slice(13)}`, 'an API key'],
  ['a key split by zero-width joiners and a soft hyphen', `s\u200dk-\u00adant-api03-${ANT.slice(13)}`, 'an API key'],
  ['a key behind bidi controls', `\u202e${ANT}\u202c`, 'an API key'],
  ['a key with a word joiner and a BOM inside', `sk-ant-api03\u2060-${ANT.slice(13, 30)}\ufeff${ANT.slice(30)}`, 'an API key'],
  ['a key in fullwidth forms', fullwidth(ANT), 'an API key'],
  ['a GitHub token split by a zero-width non-joiner', 'ghp_\u200cabcdefghijklmnopqrstuvwxyz0123456789', 'a GitHub token'],
  ['an AWS key in fullwidth forms', fullwidth('AKIAIOSFODNN7EXAMPLE'), 'an AWS access key'],
  ['an askrelay agent token', `use ${AGENT} for it`, 'an askrelay agent token'],
  ['an agent token split by a zero-width space', `asa_\u200b${AGENT.slice(4)}`, 'an askrelay agent token'],
  ['an askrelay personal token', `mine is ${PERSONAL}`, 'an askrelay personal token'],
  ['a personal token in fullwidth forms', fullwidth(PERSONAL), 'an askrelay personal token'],
  ['the relay token', `the token is ${RELAY_TOKEN}.`, "the relay's token"],
  ['the relay token split by zero-width spaces', `${RELAY_TOKEN.slice(0, 8)}\u200b${RELAY_TOKEN.slice(8, 16)}\u200b${RELAY_TOKEN.slice(16)}`, "the relay's token"],
  ['the relay token in fullwidth forms', fullwidth(RELAY_TOKEN), "the relay's token"],
  ['a password with letters and digits', 'password: hunter2hunter2', 'a secret'],
  ['a quoted password', `db_password = "Tr0ub4dor&3"`, 'a secret'],
  ['a password of symbols and letters', 'password: p@ss!word', 'a secret'],
  ['a numeric password', 'pwd=123456789', 'a secret'],
  ['a hex API key', 'api_key=a8f5f167f44f4964e6c998dee827110c', 'a secret'],
  ['a base64-looking secret of letters only', 'client_secret: qWeRtYuIoPaSdFgHjKlZ', 'a secret'],
  ['a secret assignment in fullwidth forms', fullwidth('token=x9y8z7w6v5u4'), 'a secret'],
  ['a secret with a zero-width space after the key', 'secret:\u200b s3cr3tValue99', 'a secret'],
];

const ACCEPT: [string, string][] = [
  ['an optional password', 'password: optional'],
  ['a required token', 'the token: required'],
  ['no API key', 'api_key = none'],
  ['a pointer to the docs', 'secret: see the docs'],
  ['a word in parentheses', 'password: (optional)'],
  ['a placeholder', 'token: <your-token-here>'],
  ['an environment reference', 'api_key = ${OPENAI_API_KEY}'],
  ['a %VAR% reference', 'password=%DB_PASSWORD%'],
  ['a masked value', 'password: ********'],
  ['a working directory', 'pwd: /home/me/projects/askrelay'],
  ['a URL to the docs', 'secret: https://example.com/docs/secrets'],
  ['a CamelCase word', 'password: NotApplicableHere'],
  ['a hyphenated phrase', 'token: read-only-access'],
  ['prose in fullwidth forms', fullwidth('password: optional')],
  ['prose with zero-width spaces', 'the\u200b token:\u200b required'],
  ['a token limit', 'the token limit is 4096'],
  ['the prefixes named', 'agent tokens start with asa_ and keys with sk-ant-'],
  ['a word ending in asp_', 'grasp_of_the_whole_problem_space_matters'],
  ['a commit', 'use commit 3f9a2c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39'],
  ['a short relay-like word', 'Rk3mVq9Z is not the whole token'],
];

describe('findCredential', () => {
  it.each(REFUSE)('refuses %s', (_name, text, kind) => {
    expect(findCredential(text, [RELAY_TOKEN])).toBe(kind);
  });

  it.each(ACCEPT)('accepts %s', (_name, text) => {
    expect(findCredential(text, [RELAY_TOKEN])).toBeUndefined();
  });

  it('knows the secrets remembered until they are forgotten', () => {
    expect(findCredential(`here: ${RELAY_TOKEN}`)).toBeUndefined();
    const forget = rememberSecret(RELAY_TOKEN);
    const again = rememberSecret(RELAY_TOKEN);
    expect(findCredential(`here: ${RELAY_TOKEN}`)).toBe("the relay's token");
    forget();
    expect(findCredential(`here: ${RELAY_TOKEN}`)).toBe("the relay's token"); // still remembered once
    again();
    expect(findCredential(`here: ${RELAY_TOKEN}`)).toBeUndefined();
  });

  it('never remembers a short value, which would refuse ordinary words', () => {
    const forget = rememberSecret('hello');
    expect(findCredential('hello world')).toBeUndefined();
    forget();
  });
});

describe('answers over HTTP', () => {
  let relay: TestRelay;
  const token = 'Zq7Wm3Kx9Vb2Nc5Lp8Rt4Hy6Jd1Fg0S';

  beforeAll(async () => {
    relay = await startTestRelay({ ASKRELAY_TOKEN: token });
  });
  afterAll(() => relay.stop());

  const open = async () => {
    const res = await relay.api('/api/cards', { method: 'POST', json: { questions: [{ id: 'why', text: 'Anything to add?' }] } });
    return (await res.json()) as Card;
  };

  it.each([
    ['the relay token', `here it is: ${token}`],
    ['the relay token split by a zero-width space', `${token.slice(0, 10)}\u200b${token.slice(10)}`],
    ['an agent token', AGENT],
    ['a zero-width-split key', `sk-ant-\u200bapi03-${ANT.slice(13)}`],
  ])('refuse %s with 422 credential_refused, and the card stays open', async (_name, text) => {
    const card = await open();
    const res = await relay.api(`/api/cards/${card.id}/answer`, { method: 'POST', json: { answers: { why: { selected: [], text } } } });
    expect(res.status).toBe(422);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('credential_refused');
    expect((await relay.relay.get(card.id)).status).toBe('pending');
  });

  it.each(ACCEPT.slice(0, 4))('take %s', async (_name, text) => {
    const card = await open();
    const res = await relay.api(`/api/cards/${card.id}/reply`, { method: 'POST', json: { text } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Card).answer).toEqual({ why: { selected: [], text } });
  });
});
