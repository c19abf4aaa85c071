// What this node holds right now, counted where it happens (the event stream route, the MCP
// route): shown for each node by GET /api/nodes, so an operator sees where the load is.

export interface NodeLoad {
  /** Open event streams (GET /api/events). */
  streams: number;
  /** MCP tools/call requests waiting on a card. */
  mcpCalls: number;
  /** Long polls waiting on a card (GET /api/cards/:id/wait). */
  waits: number;
}

export const newNodeLoad = (): NodeLoad => ({ streams: 0, mcpCalls: 0, waits: 0 });

/** What the node list shows a node holding: its sessions' runners, and the load counted above. */
export const holdsOf = (sessions: { liveIds(): string[] }, load: NodeLoad | undefined): Record<string, number> => ({
  sessions: sessions.liveIds().length,
  mcpCalls: load?.mcpCalls ?? 0,
  streams: load?.streams ?? 0,
  waits: load?.waits ?? 0,
});
