import { CallWaits, type CallTiming } from '../../src/relay/call-waits.js';
import type { Relay } from '../../src/relay/relay.js';
import * as adapter from './adapter.js';

// The I/O around one OpenClaw ask_user call over MCP: the shared call machinery with
// OpenClaw's adapter (the card waits timeoutSeconds; the result is answered / no_answer).
export const openclawWaits = (relay: Relay, timing?: CallTiming) => new CallWaits(relay, adapter, timing);
