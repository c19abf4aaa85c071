import { z } from 'zod';
import { namedDuration } from '../config.js';
import type { ProviderRunner, RunnerFactory } from './runner.js';

// What a provider declares about itself (providers/<id>/index.ts), and the plain data the
// composition root makes of the registry (providers/index.ts) for the rest of the relay: the
// session manager's runner factories, GET /api/providers, the relay tool's description and
// the CLI help. Nothing here names a provider: adding one is its folder and one line in the
// registry.

export interface EngineDeclaration {
  readonly id: string;
  /** A short human description (the page's engine hint). */
  readonly name: string;
  /** The engine a start request without `engine` gets (one per provider; else the first). */
  readonly default?: boolean;
  /** The engine's own card wait setting; without it its cards wait ASKRELAY_WAIT. */
  readonly wait?: { readonly variable: string; readonly default: string };
  /** ask_user variants the engine offers (askUserVariant on start), the first the default. */
  readonly askUserVariants?: readonly string[];
}

/** The part of a start request a provider may refuse. */
export interface StartRequest {
  readonly engine: string;
  readonly askUserVariant?: string;
}

export interface ProviderDeclaration<Id extends string = string> {
  readonly id: Id;
  readonly name: string;
  readonly engines: readonly EngineDeclaration[];
  /** The environment variables its endpoint and key come from. */
  readonly variables: readonly string[];
  readonly runner: ProviderRunner;
  /** A start request this provider refuses although its engine exists: the sentence why. */
  checkStart?(request: StartRequest): string | undefined;
}

/** An engine as GET /api/providers serves it. */
export interface EngineInfo {
  id: string;
  name: string;
  default: boolean;
  waitSeconds: number;
  askUserVariants?: string[];
}

/** A provider as GET /api/providers serves it: plain data for surfaces. */
export interface ProviderInfo {
  id: string;
  name: string;
  engines: EngineInfo[];
  variables: string[];
}

/**
 * The registry as plain data, each engine's card wait read from the environment (its own
 * variable, else `defaultWaitMs`: ASKRELAY_WAIT). Throws, naming the variable, on a bad one.
 */
export function describeProviders(declarations: readonly ProviderDeclaration[], env: NodeJS.ProcessEnv, defaultWaitMs: number): ProviderInfo[] {
  return declarations.map((p) => {
    const defaultEngine = p.engines.find((e) => e.default) ?? p.engines[0];
    return {
      id: p.id,
      name: p.name,
      engines: p.engines.map((e) => ({
        id: e.id,
        name: e.name,
        default: e === defaultEngine,
        waitSeconds: (e.wait ? namedDuration(e.wait.variable, env[e.wait.variable] ?? e.wait.default) : defaultWaitMs) / 1000,
        ...(e.askUserVariants ? { askUserVariants: [...e.askUserVariants] } : {}),
      })),
      variables: [...p.variables],
    };
  });
}

/** An engine's own card wait setting, once however many engines read it ("copilot/extension"). */
export interface EngineWaitSetting {
  variable: string;
  default: string;
  engines: string[];
}

/** The engines' own card wait settings (ASKRELAY_WAIT_EXTENSION…), for the CLI's help. */
export function engineWaitSettings(declarations: readonly ProviderDeclaration[]): EngineWaitSetting[] {
  const settings = new Map<string, EngineWaitSetting>();
  for (const p of declarations) {
    for (const e of p.engines) {
      if (!e.wait) continue;
      const setting = settings.get(e.wait.variable) ?? { variable: e.wait.variable, default: e.wait.default, engines: [] };
      setting.engines.push(`${p.id}/${e.id}`);
      settings.set(e.wait.variable, setting);
    }
  }
  return [...settings.values()];
}

/** The session manager's runner factories, by provider id in the registry's order. */
export function runnerFactories(declarations: readonly ProviderDeclaration[], info: readonly ProviderInfo[]): Record<string, RunnerFactory> {
  return Object.fromEntries(
    declarations.map((p) => {
      const engines = info.find((i) => i.id === p.id)?.engines ?? [];
      const factory: RunnerFactory = {
        ...p.runner,
        // The default first: RunnerFactory's engines list says so by order.
        engines: [...engines.filter((e) => e.default), ...engines.filter((e) => !e.default)].map((e) => e.id),
        waitsMs: Object.fromEntries(engines.map((e) => [e.id, e.waitSeconds * 1000])),
        askUserVariants: Object.fromEntries(engines.flatMap((e) => (e.askUserVariants ? [[e.id, e.askUserVariants]] : []))),
        ...(p.checkStart ? { checkStart: p.checkStart.bind(p) } : {}),
      };
      return [p.id, factory];
    }),
  );
}

/** The provider ids as a zod enum: the one enum every check of a provider id uses. */
export function providerIdSchema(ids: readonly string[]): z.ZodType<string> {
  if (!ids.length) return z.never({ error: 'no provider is available in this relay' });
  return z.enum(ids as [string, ...string[]]);
}

/** "a", "a or b", "a, b or c" (or with another conjunction: "a, b and c"). */
export function orList(words: readonly string[], conjunction = 'or'): string {
  return words.length < 2 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} ${conjunction} ${words[words.length - 1]}`;
}

/** A provider's declaration, its id kept as a literal type (the registry derives ProviderId from it). */
export const declareProvider = <Id extends string>(declaration: ProviderDeclaration<Id>): ProviderDeclaration<Id> => declaration;
