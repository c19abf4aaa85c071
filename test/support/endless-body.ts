import { request } from 'node:http';

export interface EndlessBodyOutcome {
  status: number;
  body: string;
  /** Bytes of body written before the answer came (or before giving up). */
  sent: number;
  /** Whether the answer came while the body was still being sent (the request never ended). */
  answeredEarly: boolean;
}

/**
 * POSTs a chunked body of up to `maxBytes`, one chunk at a time, each written only once the
 * socket took the last one, and stops at the first sign of an answer. A relay that reads to
 * its limit and answers answers while the body is still coming; one that reads the whole
 * body first answers only after the request ended (answeredEarly false).
 */
export function sendEndlessBody(url: string, headers: Record<string, string>, maxBytes = 32 * 1024 * 1024): Promise<EndlessBodyOutcome> {
  const chunk = Buffer.alloc(64 * 1024, 'x'.charCodeAt(0));
  return new Promise((resolve, reject) => {
    let sent = 0;
    let ended = false;
    let answered = false;
    const req = request(url, { method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } });
    req.on('response', (res) => {
      answered = true;
      const answeredEarly = !ended;
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8'), sent, answeredEarly });
        req.destroy();
      });
      res.on('error', reject);
    });
    // The relay cutting the connection after its answer is expected; before it, a failure.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const next = () => {
      if (answered || req.destroyed) return;
      if (sent >= maxBytes) {
        ended = true;
        req.end();
        return;
      }
      sent += chunk.length;
      // Wait for the socket to take the chunk, and a turn of the loop for an answer to arrive.
      req.write(chunk, () => setImmediate(next));
    };
    req.flushHeaders();
    next();
  });
}

/**
 * Sends only the headers of a POST that declares `length` bytes: the answer that comes
 * without any body, or a rejection when none came within `withinMs` (the relay waits for the body).
 */
export function sendDeclaredLength(url: string, headers: Record<string, string>, length: number, withinMs = 3000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': String(length) }, signal: AbortSignal.timeout(withinMs) });
    req.on('response', (res) => {
      const parts: Buffer[] = [];
      res.on('data', (part: Buffer) => parts.push(part));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts).toString('utf8') });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}
