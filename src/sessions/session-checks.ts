import { RelayError } from '../errors.js';
import type { Session, StartSession } from './model.js';
import type { RunnerFactory } from './runner.js';

// Whether a session may start, or resume, on this relay with the providers it was given:
// pure checks, each refusal one sentence.

/**
 * A new session's record from a start request, and the factory of its provider's runner;
 * throws the RelayError saying why the relay or the provider refuses it.
 */
export function newSession(
  input: StartSession,
  factories: Readonly<Record<string, RunnerFactory>>,
  fields: { id: string; now: string; env: NodeJS.ProcessEnv },
): { session: Session; factory: RunnerFactory } {
  const factory = factories[input.provider];
  if (!factory) throw new RelayError('invalid_request', `The provider "${input.provider}" is not available in this relay.`);
  const engine = input.engine ?? factory.engines[0];
  if (!factory.engines.includes(engine)) {
    throw new RelayError('invalid_engine', `"${engine}" is not an engine of ${input.provider}; use ${factory.engines.join(' or ')}.`);
  }
  const variants = factory.askUserVariants?.[engine];
  const refusal =
    factory.checkStart?.({ engine, ...(input.askUserVariant ? { askUserVariant: input.askUserVariant } : {}) }) ??
    // An engine without variants has the one ask_user, the classic kind.
    (input.askUserVariant && !(variants ?? ['classic']).includes(input.askUserVariant)
      ? `askUserVariant "${input.askUserVariant}" is not offered by ${input.provider}'s ${engine} engine.`
      : undefined);
  if (refusal) throw new RelayError('invalid_engine', refusal);
  if (input.plan && !factory.planMode) throw new RelayError('invalid_engine', `${input.provider} has no plan mode to start in; plan is for codex.`);
  const session: Session = {
    id: fields.id,
    provider: input.provider,
    engine,
    model: input.model ?? factory.defaultModel(fields.env),
    status: 'starting',
    relayMode: input.relayMode ?? 'autopilot',
    agentsMayAnswer: input.agentsMayAnswer ?? false,
    ...(variants?.length ? { askUserVariant: (input.askUserVariant ?? variants[0]) as Session['askUserVariant'] } : {}),
    ...(input.plan ? { plan: true } : {}),
    ...(input.labels && Object.keys(input.labels).length ? { labels: input.labels } : {}),
    createdAt: fields.now,
    updatedAt: fields.now,
  };
  return { session, factory };
}

/**
 * Whether a stored session resumes on this node: with its factory; or it cannot, and `give-up`
 * (its provider or engine is gone: its pending cards are cancelled too) or `fail` (it ran on
 * node `from`, which stopped, and its engine kept its state on that node's disk).
 */
export type Resumption = { kind: 'resume'; factory: RunnerFactory } | { kind: 'give-up'; error: string } | { kind: 'fail'; error: string };

export function resumption(session: Session, factory: RunnerFactory | undefined, from: string | undefined, node: string | undefined): Resumption {
  if (!factory) {
    return { kind: 'give-up', error: `The provider "${session.provider}" is not available in this relay any more, so the session cannot resume; its pending cards were cancelled.` };
  }
  if (!factory.engines.includes(session.engine)) {
    return {
      kind: 'give-up',
      error: `The engine "${session.engine}" of ${session.provider} is not available in this relay any more (it has ${factory.engines.join(', ')}), so the session cannot resume; its pending cards were cancelled.`,
    };
  }
  if (from && !factory.movable?.includes(session.engine)) {
    return {
      kind: 'fail',
      error: `The session ran on node ${from}, which stopped; its ${session.engine} engine keeps its state on that node's disk, so node ${node} cannot resume it. Start it again.`,
    };
  }
  return { kind: 'resume', factory };
}
