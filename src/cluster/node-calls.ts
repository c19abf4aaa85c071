import { randomBytes } from 'node:crypto';
import { errorTable, RelayError, type ErrorCode } from '../errors.js';
import type { Cluster } from './cluster.js';

// Asking the node that holds a piece of work to act on it (the session whose runner it has:
// a message, a stop), over the same event bus: a call names its node, the node runs the
// handler and publishes the outcome. A node that does not answer within the time is taken
// for gone (503 node_unavailable); its work moves once its lease runs out.

const CALL = 'node.call';
const REPLY = 'node.reply';

interface CallMessage {
  to: string;
  from: string;
  id: string;
  op: string;
  args: unknown;
}
interface ReplyMessage {
  to: string;
  id: string;
  error?: { code: string; message: string };
}

export class NodeCalls {
  private readonly handlers = new Map<string, (args: unknown) => Promise<unknown>>();
  private readonly waiting = new Map<string, (reply: ReplyMessage) => void>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly cluster: Cluster,
    private readonly timeoutMs = 10_000,
  ) {
    this.unsubscribe = cluster.subscribe(({ name, data }) => {
      if (name === CALL) this.serve(data as CallMessage);
      else if (name === REPLY) this.settle(data as ReplyMessage);
    });
  }

  /** What this node does when another asks it to `op`. */
  handle(op: string, handler: (args: unknown) => Promise<unknown>): void {
    this.handlers.set(op, handler);
  }

  /** Asks `node` to `op`; resolves when done there, rejects with its error (the same code). */
  call(node: string, op: string, args: unknown, what: string): Promise<void> {
    const id = randomBytes(8).toString('hex');
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new RelayError('node_unavailable', `The node running ${what} (${node}) did not answer; try again. If it stopped, another node takes ${what} over within ${Math.ceil(this.cluster.leaseMs / 1000)} s.`));
      }, this.timeoutMs);
      timer.unref();
      this.waiting.set(id, (reply) => {
        clearTimeout(timer);
        if (!reply.error) return resolve();
        const code = (reply.error.code in errorTable ? reply.error.code : 'node_unavailable') as ErrorCode;
        reject(new RelayError(code, reply.error.message));
      });
      const message: CallMessage = { to: node, from: this.cluster.node, id, op, args };
      this.cluster.publish(CALL, message, id).catch((err: unknown) => this.settle({ to: this.cluster.node, id, error: { code: 'store_unavailable', message: (err as Error).message } }));
    });
  }

  stop(): void {
    this.unsubscribe();
  }

  private serve(call: CallMessage): void {
    if (call.to !== this.cluster.node) return;
    const handler = this.handlers.get(call.op);
    const done = handler ? handler(call.args) : Promise.reject(new Error(`This node does not do "${call.op}".`));
    void done.then(
      () => ({ to: call.from, id: call.id }),
      (err: unknown) => ({
        to: call.from,
        id: call.id,
        error: err instanceof RelayError ? { code: err.code, message: err.message } : { code: 'node_unavailable', message: (err as Error)?.message ?? String(err) },
      }),
    ).then((reply: ReplyMessage) => this.cluster.publish(REPLY, reply, call.id)).catch(() => {});
  }

  private settle(reply: ReplyMessage): void {
    if (reply.to !== this.cluster.node) return;
    const waiter = this.waiting.get(reply.id);
    this.waiting.delete(reply.id);
    waiter?.(reply);
  }
}
