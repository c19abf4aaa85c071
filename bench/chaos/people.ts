import { randomUUID } from 'node:crypto';
import type { Card } from '../../src/cards/model.js';
import type { Random } from './random.js';
import { COLOURS, pause, type Workload } from './workload.js';

// The people answering: they watch the pending cards (the page's list, through the
// balancer) and, after a moment's thought, answer most of them, skip a few and leave the
// rest to expire; now and then two of them answer one card at the same moment, with the same
// or another colour. Each answer carries an Idempotency-Key and is sent again with it when
// no reply (or a 5xx) comes back, as the page does; the relay's final reply is recorded.

const PEOPLE = ['ada', 'grace', 'linus', 'barbara'];

type Action = { person: string; action: 'answer' | 'skip'; labels: string[] };

async function give(w: Workload, cardId: string, { person, action, labels }: Action): Promise<void> {
  const client = w.client(person);
  const key = randomUUID();
  const path = `/api/cards/${cardId}/${action}`;
  const json = action === 'answer' ? { answers: { q1: { selected: labels } } } : undefined;
  let status = 0;
  for (let attempt = 0; attempt < 6 && !w.stopped.aborted; attempt++) {
    const reply = await client.send('POST', path, { json, headers: { 'idempotency-key': key, 'x-askrelay-surface': `chaos-${person}` } });
    if (reply && reply.status < 500) {
      status = reply.status;
      break;
    }
    await pause(300 * 2 ** attempt, w.stopped);
  }
  w.recorder.count(`${action}s.${status}`);
  w.recorder.answer({ cardId, person, action, labels, status, at: Date.now() });
}

/** What the people do with one card they just saw (nothing: it expires). */
export function plan(random: Random, p: Workload['options']['people']): Action[] {
  const [first, second] = random.shuffle(PEOPLE);
  const roll = random.next();
  if (roll < p.skip) return [{ person: first, action: 'skip', labels: [] }];
  if (roll >= p.skip + p.answer) return [];
  const labels = [random.pick(COLOURS)];
  if (!random.chance(p.second)) return [{ person: first, action: 'answer', labels }];
  // Half the time the second person picks the same colour: the relay takes that as the same answer (200).
  const other = random.chance(0.5) ? labels : [random.pick(COLOURS.filter((c) => c !== labels[0]))];
  return [
    { person: first, action: 'answer', labels },
    { person: second, action: 'answer', labels: other },
  ];
}

export async function people(w: Workload, until: () => boolean): Promise<void> {
  const random = w.random.fork();
  const client = w.client('people');
  const seen = new Set<string>();
  const acting = new Set<Promise<void>>();
  while (!until() && !w.stopped.aborted) {
    const reply = await client.send('GET', '/api/cards?status=pending&limit=10000');
    if (reply?.status === 200) {
      for (const card of (JSON.parse(reply.text) as { cards: Card[] }).cards) {
        if (seen.has(card.id)) continue;
        seen.add(card.id);
        const actions = plan(random, w.options.people);
        if (actions.length === 2) w.recorder.count('races');
        const think = random.between(w.options.people.thinkMs);
        for (const action of actions) {
          // Two people at once: the second a few milliseconds after the first.
          const done = pause(think + random.between([0, 30]), w.stopped).then(() => (w.stopped.aborted ? undefined : give(w, card.id, action)));
          acting.add(done);
          void done.finally(() => acting.delete(done));
        }
      }
    }
    await pause(random.between([300, 800]), w.stopped);
  }
  await Promise.allSettled([...acting]);
}
