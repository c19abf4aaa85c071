import { CallWaits, type CallTiming } from '../../src/relay/call-waits.js';
import type { Relay } from '../../src/relay/relay.js';
import * as adapter from './adapter.js';

// The I/O around one Cursor-dialect ask_user call over MCP: the relay's shared call
// machinery (re-attach, progress, cancellation, grace) with this dialect's adapter.
export const cursorWaits = (relay: Relay, timing?: CallTiming) => new CallWaits(relay, adapter, timing);
