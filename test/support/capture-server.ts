import { createServer, type IncomingHttpHeaders } from 'node:http';
import { listen } from '../fakes/fake-http.js';

// A loopback HTTP server standing in for the app a platform calls (a webhook, an interactions
// endpoint, an integration URL): it keeps every request byte for byte, so a test can check
// what a fake sends (headers, raw body, signature) independently of the product's own parser.

export interface CapturedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as received. */
  raw: string;
}

export interface CaptureServer {
  url: string;
  requests: CapturedRequest[];
  close(): Promise<void>;
}

/** Answers every request with `reply(request)` (default 200 `{}`). */
export async function startCaptureServer(
  reply: (request: CapturedRequest) => { status: number; body: string; type?: string } = () => ({ status: 200, body: '{}' }),
): Promise<CaptureServer> {
  const requests: CapturedRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const request = { method: req.method ?? '', path: req.url ?? '/', headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') };
    requests.push(request);
    const answer = reply(request);
    res.writeHead(answer.status, { 'content-type': answer.type ?? 'application/json' }).end(answer.body);
  });
  const { base, close } = await listen(server);
  return { url: base, requests, close };
}
