import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// Web Push encryption (RFC 8291: a new ECDH key pair, ECDH, HKDF, AES-128-GCM; about 0.3 ms a
// push) on a worker thread, so that 100 subscriptions do not take 30 ms of the relay's own
// thread at every card event. One worker, started with the first push and stopped with the
// sender; each request is a batch of the pushes ready at that moment. If the worker cannot
// run (or dies), pushes are encrypted here instead: slower, never lost.

export interface EncryptRequest {
  p256dh: string;
  auth: string;
  json: string;
}

type Reply = { id: number; bodies: (Uint8Array | { error: string })[] };

// web-push's own encrypt, in the worker; it is CommonJS, so the worker is a plain script.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const webpush = require(workerData.webPush);
parentPort.on('message', ({ id, items }) => {
  const bodies = items.map(({ p256dh, auth, json }) => {
    try {
      return new Uint8Array(webpush.encrypt(p256dh, auth, json, 'aes128gcm').cipherText);
    } catch (err) {
      return { error: String((err && err.message) || err) };
    }
  });
  parentPort.postMessage({ id, bodies });
});
`;

const MAX_LOST = 3;

export class PushEncryptor {
  private worker?: Worker;
  private serial = 0;
  private readonly pending = new Map<number, { items: EncryptRequest[]; done: (bodies: Reply['bodies']) => void }>();
  /** Requests of this turn, sent to the worker together. */
  private batch: { item: EncryptRequest; resolve: (body: Uint8Array) => void; reject: (err: Error) => void }[] = [];
  private stopped = false;
  /** Workers lost so far: after MAX_LOST the main thread encrypts for good. */
  private lost = 0;

  constructor(
    /** The main-thread fallback (web-push's encrypt). */
    private readonly here: (item: EncryptRequest) => Uint8Array,
    private readonly log: (line: string) => void,
  ) {}

  encrypt(item: EncryptRequest): Promise<Uint8Array> {
    if (this.stopped) return Promise.resolve().then(() => this.here(item));
    return new Promise((resolve, reject) => {
      if (this.batch.push({ item, resolve, reject }) === 1) queueMicrotask(() => this.flush());
    });
  }

  stop(): void {
    this.stopped = true;
    void this.worker?.terminate();
    this.worker = undefined;
  }

  private flush(): void {
    const batch = this.batch;
    this.batch = [];
    const settle = (bodies: Reply['bodies']) =>
      batch.forEach(({ resolve, reject }, i) => {
        const body = bodies[i];
        if (body instanceof Uint8Array) resolve(body);
        else reject(new Error(`could not encrypt the push: ${body?.error ?? 'no reply'}`));
      });
    const worker = this.started();
    if (!worker) return settle(batch.map(({ item }) => this.safely(item)));
    const id = this.serial++;
    this.pending.set(id, { items: batch.map((b) => b.item), done: settle });
    worker.postMessage({ id, items: batch.map((b) => b.item) });
  }

  private safely(item: EncryptRequest): Uint8Array | { error: string } {
    try {
      return this.here(item);
    } catch (err) {
      return { error: (err as Error).message };
    }
  }

  private started(): Worker | undefined {
    if (this.worker || this.stopped || this.lost >= MAX_LOST) return this.worker;
    try {
      const webPush = createRequire(import.meta.url).resolve('web-push');
      const worker = new Worker(WORKER, { eval: true, workerData: { webPush } });
      worker.unref(); // pushes in flight do not keep the relay's process alive
      worker.on('message', ({ id, bodies }: Reply) => {
        const waiting = this.pending.get(id);
        this.pending.delete(id);
        waiting?.done(bodies);
      });
      const lost = (why: string) => {
        if (this.worker !== worker) return;
        this.worker = undefined;
        this.lost += 1;
        if (!this.stopped) this.log(`push: the encryption worker stopped (${why}); pushes are encrypted on the main thread until it is started again`);
        // What it was given is encrypted here: nothing is lost with it.
        const waiting = [...this.pending.values()];
        this.pending.clear();
        waiting.forEach(({ items, done }) => done(items.map((item) => this.safely(item))));
      };
      worker.on('error', (err) => lost(err.message));
      worker.on('exit', (code) => lost(`exit ${code}`));
      this.worker = worker;
      return worker;
    } catch (err) {
      this.log(`push: no encryption worker (${(err as Error).message}); pushes are encrypted on the main thread`);
      return undefined;
    }
  }
}
