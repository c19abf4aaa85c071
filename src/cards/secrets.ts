import { withoutInvisible } from './text.js';

// An answer must never carry a credential: it would end up in an agent's context, a
// transcript and logs. These patterns catch the common shapes without flagging ordinary
// words, paths or commit hashes. Text is normalised before matching (invisible characters
// removed, then NFKC), so a key split by a zero-width space or written in fullwidth forms
// is still a key.
const PATTERNS: { name: string; pattern: RegExp }[] = [
  { name: 'a private key', pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----/ },
  { name: 'an API key', pattern: /\bsk-(?:ant-|proj-|live-|test-)?[A-Za-z0-9_-]{20,}/ },
  { name: 'a GitHub token', pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/ },
  { name: 'an AWS access key', pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { name: 'a Slack token', pattern: /\bxox[abposr]-[A-Za-z0-9-]{10,}/ },
  { name: 'a Google API key', pattern: /\bAIza[0-9A-Za-z_-]{35}\b/ },
  { name: 'a GitLab token', pattern: /\bglpat-[A-Za-z0-9_-]{20,}/ },
  { name: 'an npm token', pattern: /\bnpm_[A-Za-z0-9]{36}\b/ },
  { name: 'an xAI key', pattern: /\bxai-[A-Za-z0-9]{20,}/ },
  // The agent tokens the relay gives its sessions (src/sessions/manager.ts).
  { name: 'an askrelay agent token', pattern: /(?<![A-Za-z0-9])asa_[A-Za-z0-9_-]{20,}/ },
  // A person's token (src/store/user-store.ts): whoever reads the answer would be that person.
  { name: 'an askrelay personal token', pattern: /(?<![A-Za-z0-9])asp_[A-Za-z0-9_-]{20,}/ },
  { name: 'a JSON Web Token', pattern: /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/ },
  { name: 'a bearer token', pattern: /\bBearer\s+[A-Za-z0-9._~+/-]{20,}=*/ },
];

// `password: …`, `api_key = …` and the like (also `db_password`, `client_secret`). Only a
// value that looks random counts (secretLooking): "password: optional" is prose.
const ASSIGNMENT = /(?<![A-Za-z0-9])(?:api[_-]?key|secret|token|password|passwd|pwd)\s*[:=]\s*["'`]?([^\s"'`]+)/gi;

// A value that stands for a secret without being one: ${VAR}, $VAR, %VAR%.
const REFERENCE = /^(?:\$\{\w+\}|\$\w+|%\w+%)$/;
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;

/** Whether an assigned value looks like a secret rather than a word, a placeholder, a path or a URL. */
function secretLooking(raw: string): boolean {
  if (REFERENCE.test(raw) || URL_LIKE.test(raw)) return false;
  // Brackets and sentence punctuation around it are not part of it: "(optional)", "<your-token>", "none."
  const value = raw.replace(/^[([{<]+|[)\]}>.,;:!?]+$/g, '');
  if (value.length < 8 || /^(.)\1*$/.test(value)) return false; // short, or masked: ********, xxxxxxxx
  const letters = /[A-Za-z]/.test(value);
  const digits = /\d/.test(value);
  if (digits) return true; // hunter22, a8f5f1…, 12345678
  // Letters with symbols a password takes (not the "-", "_", ".", "/" of words and paths).
  if (letters && /[^A-Za-z0-9_./-]/.test(value)) return true;
  // Letters only: a word or a CamelCase phrase, unless the case flips as often as in base64.
  const flips = value.match(/[a-z][A-Z]/g)?.length ?? 0;
  return value.length >= 16 && flips >= value.length / 6;
}

// The relay's own secrets, known only at run time (the relay token); the composition root
// remembers them (src/start.ts). Counted, so two relays in one process with the same token
// (tests) each forget only their own.
const known = new Map<string, number>();

// Shorter values would refuse ordinary words; the relay refuses tokens that short anyway.
const MIN_KNOWN_CHARS = 16;

const normalise = (text: string) => withoutInvisible(text).replace(/[\u0000-\u0008\u000e-\u001f\u007f-\u009f]/g, '').normalize('NFKC');

/** Makes findCredential refuse `value` until the returned function is called. */
export function rememberSecret(value: string): () => void {
  const secret = normalise(value);
  if (secret.length < MIN_KNOWN_CHARS) return () => {};
  known.set(secret, (known.get(secret) ?? 0) + 1);
  let forgotten = false;
  return () => {
    if (forgotten) return;
    forgotten = true;
    const left = (known.get(secret) ?? 1) - 1;
    if (left > 0) known.set(secret, left);
    else known.delete(secret);
  };
}

/**
 * Names what kind of credential the text looks like, or undefined when it looks clean.
 * `secrets`: the relay's own secrets to refuse (by default those remembered).
 */
export function findCredential(text: string, secrets: Iterable<string> = known.keys()): string | undefined {
  const normalised = normalise(text);
  for (const secret of secrets) {
    const s = normalise(secret);
    if (s.length >= MIN_KNOWN_CHARS && normalised.includes(s)) return "the relay's token";
  }
  const found = PATTERNS.find(({ pattern }) => pattern.test(normalised));
  if (found) return found.name;
  for (const m of normalised.matchAll(ASSIGNMENT)) if (secretLooking(m[1])) return 'a secret';
  return undefined;
}

// A personal token is `asp_` and 32 base64url characters. The shape above misses one glued to
// a word ("keyasp_…"), which a plain word could also look like; the relay core therefore asks
// the store about every such run (by its hash) and refuses only the live ones.
const PERSONAL_TOKEN_RUN = /asp_[A-Za-z0-9_-]{32}/g;

/** Every run of the text that could be a personal token, for a lookup by hash. */
export function personalTokenCandidates(text: string): string[] {
  return [...normalise(text).matchAll(PERSONAL_TOKEN_RUN)].map((m) => m[0]);
}
