// The page's one store: every piece of state that outlives a function call lives here, and
// nowhere else (the modules hold constants and functions only). Pure: no DOM at import.

/** A fresh store; the page keeps one (`store`), the tests make their own. */
export function createStore() {
  return {
    /** The relay accepted our cookie: the page shows the cards and listens. */
    signedIn: false,
    /** @type {Map<string, {card: any, el: HTMLElement, ui: any, parts?: any}>} every card on the page, by id */
    shown: new Map(),
    /** The card the user selected (clicked, tabbed to, opened from a notification): number keys go there, and nowhere else. */
    activeId: null,
    /** @type {Set<any>} card entries whose answer waits out the undo window (card-actions.js) */
    held: new Set(),
    /** A card named by #card=<id> that the relay does not know (yet): shown when it arrives. */
    awaitedCard: null,
    /** The last view shown (`cards/`, `sessions/<id>`): a change scrolls to the top. */
    lastRoute: null,
    /** @type {EventSource | null} */
    events: null,
    retryTimer: null,
    /** The event stream's handlers (see api.js connect()). */
    eventHandlers: null,
    /** Makes element ids unique (nextId in dom.js). */
    uid: 0,
    /** @type {Map<string, any>} session records (no transcript), by id */
    sessions: new Map(),
    /** @type {Map<string, HTMLElement>} */
    sessionRows: new Map(),
    /** @type {Map<string, string>} each session's first prompt, its name on the page */
    sessionTitles: new Map(),
    titleFetches: new Set(),
    /** @type {Map<string, string>} unsent messages, by session */
    messageDrafts: new Map(),
    /** @type {Map<string, boolean>} agentsMayAnswer changes on their way to the relay: the value asked for, by session */
    permissionBusy: new Map(),
    /** @type {Map<string, string>} why the last agentsMayAnswer change failed, by session */
    permissionErrors: new Map(),
    /** The session open on screen: {id, session, parts, count, loading, dirty, ...} */
    opened: null,
    /** Resolves to the service worker's registration, or null (no support, or registering failed). */
    workerRegistration: Promise.resolve(null),
    pushBusy: false,
    /** The providers sessions start on (provider-choices.js, from GET /api/providers); null until they arrived. */
    providers: null,
    /** The request for them while it runs, so it is made once. */
    providersLoad: null,
    /** Why the last request for them failed: the new-session form says so. */
    providersError: null,
  };
}

export const store = createStore();

/**
 * Calls that go up the module graph (a card's answer settles it on the board, a card in a
 * transcript opens on the Cards view): app.js fills this in at start, so the modules need
 * not import each other in a circle.
 * @type {{
 *   showLogin: (message?: string) => void,
 *   upsert: (card: any) => void,
 *   revealCard: (id: string, options?: {navigate?: boolean}) => Promise<void>,
 *   navigate: (hash: string) => void,
 *   upsertSession: (s: any, options?: {fromDetail?: boolean}) => void,
 *   applySessionHead: (o: any, s: any) => void,
 *   refreshOpened: () => Promise<void>,
 *   goToStep: (entry: any, step: number) => void,
 *   markKeyboardTarget: () => void,
 *   cardReopened: (entry: any) => void,
 * }}
 */
export const actions = /** @type {any} */ ({});
