import type { Card } from '../cards/model.js';
import { RelayError } from '../errors.js';
import type { CardRouter } from '../relay/relay.js';
import { routeCard } from './match.js';
import { peopleIn, type Routes } from './rules.js';

// The routes a relay routes by, replaced through PUT /api/routes. The embedded store holds
// them in memory (and routes.json); with several nodes on one database they live there
// (`shared`) and each new card reads them (one small row, parsed again only when it changed),
// so a card made on any node right after a PUT on another follows the new routes.

export interface SharedRoutes {
  read(): Promise<Routes | undefined>;
  write(routes: Routes): Promise<void>;
  /** When they were last written (ms), undefined when never. */
  writtenAt(): Promise<number | undefined>;
}

export interface RouterOptions {
  routes: Routes;
  /** A card's session's labels, which its card inherits under its own. */
  sessionLabels(sessionId: string): Promise<Card['labels']>;
  /** The people there are, to refuse rules naming someone unknown. */
  people(): Promise<string[]>;
  /** Where the routes are kept: the file and, on PostgreSQL, the database. */
  save(routes: Routes): Promise<void>;
  /** The routes as the database holds them (every node's). */
  shared?: SharedRoutes;
}

export class Router implements CardRouter {
  private routes: Routes;

  constructor(private readonly options: RouterOptions) {
    this.routes = options.routes;
  }

  /** The routes in force. */
  async current(): Promise<Routes> {
    return this.options.shared ? ((await this.options.shared.read()) ?? []) : this.routes;
  }

  async route(card: Card) {
    const inherited = card.sessionId ? await this.options.sessionLabels(card.sessionId) : undefined;
    const labels = inherited ? { ...inherited, ...card.labels } : card.labels;
    const withLabels = labels && Object.keys(labels).length ? { ...card, labels } : card;
    return { ...(withLabels.labels ? { labels: withLabels.labels } : {}), ...routeCard(await this.current(), withLabels) };
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
    this.routes = routes;
  }
}
