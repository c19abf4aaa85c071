import { describe, expect, it } from 'vitest';
import { PushQueue, type AttemptResult, type QueueJob } from '../../src/push/push-queue.js';

// The push queue on its own: a card event's pushes to one service wait as one entry, are made
// into jobs when the service may be sent to, and count (and are dropped) as the pushes they hold.

const timing = { concurrency: 1, retries: 2, backoffMs: 60_000, maxBackoffMs: 60_000, maxQueued: 5 };

function recorder() {
  const sent: string[] = [];
  let release: (() => void) | undefined;
  const job = (service: string, name: string, result: AttemptResult = { retry: false }, hold = false): QueueJob => ({
    service,
    label: () => name,
    attempt: () => {
      sent.push(name);
      return hold ? new Promise((resolve) => (release = () => resolve(result))) : Promise.resolve(result);
    },
  });
  return { sent, job, release: () => release?.() };
}

describe('push queue groups', () => {
  it('a group becomes its jobs, in order, when its service may go', async () => {
    const { sent, job } = recorder();
    const queue = new PushQueue(timing, () => {});
    queue.add({ service: 's1', size: 3, label: () => 'three', jobs: () => ['a', 'b', 'c'].map((n) => job('s1', n)) });
    queue.add(job('s2', 'd'));
    await queue.idle();
    expect(sent).toEqual(['a', 'b', 'c', 'd']);
  });

  it('counts a group as the pushes it holds, and a full queue drops the oldest whole', async () => {
    const { sent, job, release } = recorder();
    const lines: string[] = [];
    const queue = new PushQueue(timing, (line) => lines.push(line));
    queue.add(job('s1', 'slow', { retry: false }, true)); // holds the one slot
    queue.add({ service: 's2', size: 3, label: () => 'first three', jobs: () => ['a', 'b', 'c'].map((n) => job('s2', n)) });
    queue.add({ service: 's2', size: 3, label: () => 'next three', jobs: () => ['d', 'e', 'f'].map((n) => job('s2', n)) });
    expect(queue.backlog).toEqual({ waiting: 3, sending: 1 });
    expect(lines).toEqual(['push: queue full, dropped first three']);
    release();
    await queue.idle();
    expect(sent).toEqual(['slow', 'd', 'e', 'f']);
  });

  it('a service that fails holds its groups unmade while another service goes on', async () => {
    const { sent, job } = recorder();
    const queue = new PushQueue({ ...timing, concurrency: 4 }, () => {});
    let made = 0;
    queue.add(job('down', 'probe', { retry: true, reason: 'HTTP 503' }));
    await new Promise((resolve) => setImmediate(resolve));
    queue.add({ service: 'down', size: 2, label: () => 'held', jobs: () => (made++, ['x', 'y'].map((n) => job('down', n))) });
    queue.add(job('up', 'fine'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual(['probe', 'fine']);
    expect(made).toBe(0);
    expect(queue.backlog).toEqual({ waiting: 3, sending: 0 }); // the probe's retry and the group of two
    queue.stop();
  });
});
