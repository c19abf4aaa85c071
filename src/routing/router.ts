import type { Card } from '../cards/model.js';
import { RelayError } from '../errors.js';
import type { CardRouter, RoutedCard } from '../relay/relay.js';
import { routeCard } from './match.js';
import { peopleIn, type Routes } from './rules.js';

// The routes a relay routes by, held in memory, replaced through PUT /api/routes. The
// embedded store keeps them in routes.json; with several nodes on one database they live
// there (`shared`) with a version. Each card is routed by this node's copy and stored only
// while that version is still the database's (the card store checks it in the insert
// itself): a card made on any node right after a PUT on another is routed again by the new
// routes, at no extra round trip for every other card.

/** The routes as the database holds them, and their version (null: never written). */
export interface SharedRoutesRead {
  routes: Routes;
  at: number | null;
}

export interface SharedRoutes {
  read(): Promise<SharedRoutesRead>;
  /** Stores them for every node; resolves with their new version. */
  write(routes: Routes): Promise<number>;
}

export interface RouterOptions {
  routes: Routes;
  /** A card's session's labels, which its card inherits under its own. */
  sessionLabels(sessionId: string): Promise<Card['labels']>;
  /** The people there are, to refuse rules naming someone unknown. */
  people(): Promise<string[]>;
  /** Writes the routes file a restart reads. */
  save(routes: Routes): Promise<void>;
  /** The database's routes (several nodes), and the version `routes` has there. */
  shared?: { store: SharedRoutes; at: number | null };
}

export class Router implements CardRouter {
  private routes: Routes;
  /** The version of `routes` in the shared database; undefined without one. */
  private at: number | null | undefined;

  constructor(private readonly options: RouterOptions) {
    this.routes = options.routes;
    this.at = options.shared?.at;
  }

  /** The routes in force (read again from the database, when shared). */
  async current(): Promise<Routes> {
    await this.refresh();
    return this.routes;
  }

  async route(card: Card): Promise<RoutedCard> {
    const inherited = card.sessionId ? await this.options.sessionLabels(card.sessionId) : undefined;
    const labels = inherited ? { ...inherited, ...card.labels } : card.labels;
    const withLabels = labels && Object.keys(labels).length ? { ...card, labels } : card;
    return {
      fields: { ...(withLabels.labels ? { labels: withLabels.labels } : {}), ...routeCard(this.routes, withLabels) },
      ...(this.at !== undefined ? { routesAt: this.at } : {}),
    };
  }

  /** Another node replaced the routes (a card store said so): take the database's. */
  async refresh(): Promise<void> {
    const shared = this.options.shared?.store;
    if (!shared) return;
    const read = await shared.read();
    this.routes = read.routes;
    this.at = read.at;
  }

  /** Takes new routes (PUT /api/routes): refused when one names a person who does not exist. */
  async replace(routes: Routes): Promise<void> {
    const known = new Set(await this.options.people());
    routes.forEach((rule, i) => {
      const steps = [{ field: 'to', to: rule.to }, ...(rule.escalate ?? []).map((step, j) => ({ field: `escalate[${j}].to`, to: step.to }))];
      for (const { field, to } of steps) {
        const unknown = peopleIn(to).find((name) => !known.has(name));
        if (unknown) throw new RelayError('invalid_request', `rule ${i + 1} (${rule.name}): ${field}: there is no person called "${unknown}" (askrelay users add ${unknown}).`);
      }
    });
    await this.options.save(routes);
    const at = await this.options.shared?.store.write(routes);
    this.routes = routes;
    if (at !== undefined) this.at = at;
  }
}
