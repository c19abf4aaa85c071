import { BlockList, isIP } from 'node:net';

// Where the relay may send a push. A subscription's endpoint is a URL the subscriber chose,
// and every card makes the relay POST to it: without limits a token holder points the relay
// at the machine's own ports or the private network behind it (SSRF). Real push services are
// public https hosts, so the relay refuses the rest: plain http, and any address that is
// loopback, private (RFC 1918, unique-local IPv6), link-local (cloud metadata services),
// shared (CGNAT), unspecified, multicast or reserved, and hostnames that are literally
// localhost. A hostname is resolved again when a push is sent and refused if any of its
// addresses is such an address (push-sender.ts). ASKRELAY_PUSH_ALLOW_PRIVATE=1 lets a local
// push service in (tests, a push server on the same network): then private addresses may be
// used, over http as well; a public host still needs https.

const BLOCKED = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network", 0.0.0.0 reaches the machine itself
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // shared address space (CGNAT)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local: 169.254.169.254 is the cloud metadata service
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and the broadcast address
] as const) BLOCKED.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::', 128], // unspecified
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64: an IPv4 address inside, possibly a private one
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) BLOCKED.addSubnet(net, bits, 'ipv6');

/** True for an IP address (v4, or v6 with or without brackets; IPv4-mapped v6 as its v4) that is not public. */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 4) return BLOCKED.check(bare, 'ipv4');
  if (family === 6) return BLOCKED.check(bare, 'ipv6');
  return false;
}

/** localhost and its subdomains (RFC 6761), with or without the final dot. */
const isLocalhostName = (host: string) => /(^|\.)localhost\.?$/i.test(host);

/**
 * Why the relay will not push to this endpoint, or undefined when it may: the URL is https,
 * and its host neither a private address nor localhost (unless private ones are allowed).
 * Hostnames are only resolved when a push is sent (pushTargetProblem).
 */
export function endpointProblem(text: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https:// URL of a push service';
  const local = isLocalhostName(url.hostname) || isPrivateAddress(url.hostname);
  if (local && !allowPrivate) {
    return 'names a loopback, private or link-local address; a push service is a public https:// host (ASKRELAY_PUSH_ALLOW_PRIVATE=1 allows a local one)';
  }
  if (url.protocol === 'http:' && !local) return 'must be an https:// URL of a push service (http:// only for a local push service with ASKRELAY_PUSH_ALLOW_PRIVATE=1)';
  return undefined;
}

/** The metric label of a push service: the known services by name, everything else `other` (a bounded set). */
export function pushServiceName(endpoint: string): 'fcm' | 'mozilla' | 'apple' | 'windows' | 'other' {
  let host: string;
  try {
    host = new URL(endpoint).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return 'other';
  }
  if (host === 'fcm.googleapis.com') return 'fcm';
  if (host === 'updates.push.services.mozilla.com') return 'mozilla';
  if (host === 'web.push.apple.com') return 'apple';
  if (host.endsWith('.notify.windows.com')) return 'windows';
  return 'other';
}
