// An answer must never carry a credential: it would end up in an agent's context, a
// transcript and logs. These patterns catch the common shapes without flagging ordinary
// words, paths or commit hashes.
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
  { name: 'a JSON Web Token', pattern: /\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/ },
  { name: 'a bearer token', pattern: /\bBearer\s+[A-Za-z0-9._~+/-]{20,}=*/ },
  {
    name: 'a secret',
    pattern: /\b(?:api[_-]?key|secret|token|password|passwd|pwd)\s*[:=]\s*["']?[^\s"']{8,}/i,
  },
];

/** Names what kind of credential the text looks like, or undefined when it looks clean. */
export function findCredential(text: string): string | undefined {
  return PATTERNS.find(({ pattern }) => pattern.test(text))?.name;
}
