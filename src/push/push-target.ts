import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { endpointProblem, isPrivateAddress } from './endpoint-policy.js';

// The check made when a push is about to be sent (the route checked the URL when it was
// stored). A hostname is resolved here and refused when any of its addresses is loopback,
// private or link-local, so a name pointed at 127.0.0.1 or at the cloud's metadata address
// after it was stored reaches nothing. Subscriptions stored before these checks (or while
// ASKRELAY_PUSH_ALLOW_PRIVATE was on) are checked the same way.
//
// The limit: fetch resolves the name again when it connects, so a name whose answer changes
// between the two lookups (DNS rebinding with a zero TTL) could still slip through once; the
// relay does not pin the address it checked.

/** Why no push may go to this endpoint now, or undefined when it may. */
export async function pushTargetProblem(endpoint: string, allowPrivate: boolean): Promise<string | undefined> {
  if (allowPrivate) return undefined;
  const problem = endpointProblem(endpoint, false);
  if (problem) return `the endpoint ${problem.replace(/ \(.*\)$/, '')}`;
  const host = new URL(endpoint).hostname;
  if (isIP(host.replace(/^\[|\]$/g, ''))) return undefined;
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    // Unresolvable: the request fails the same way and is retried like any outage.
    return undefined;
  }
  const bad = addresses.find(({ address }) => isPrivateAddress(address));
  return bad ? `${host} resolves to ${bad.address}, a loopback, private or link-local address` : undefined;
}
