import type { Context } from 'hono';
import { RelayError } from '../errors.js';
import type { RelayMetrics } from '../ops/metrics.js';
import { sameSecret } from '../same-secret.js';

// GET /metrics for Prometheus: the relay token opens it, and so does ASKRELAY_METRICS_TOKEN,
// which opens nothing else (a scraper's credential is then worth no card). Agent tokens and
// the page's cookie do not: the counts are the operator's.

export interface MetricsRouteOptions {
  registry: RelayMetrics;
  /** ASKRELAY_METRICS_TOKEN. */
  token?: string;
}

export function metricsRoute({ registry, token }: MetricsRouteOptions, relayToken: string) {
  return async (c: Context) => {
    const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header('authorization') ?? '')?.[1]?.trim();
    if (!bearer || !(sameSecret(bearer, relayToken) || (token !== undefined && sameSecret(bearer, token)))) {
      throw new RelayError('unauthorized', 'Send the relay token or ASKRELAY_METRICS_TOKEN as "Authorization: Bearer <token>".');
    }
    return c.body(await registry.text(), 200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
  };
}
