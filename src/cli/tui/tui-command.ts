import { emitKeypressEvents } from 'node:readline';
import { parseArgs } from 'node:util';
import { ApiError, RelayClient, findRelay } from '../client.js';
import { CLIENT_ENV_HELP, UsageError, parseFlags } from '../flags.js';
import { followEvents } from './events-stream.js';
import { render } from './render.js';
import { initialState, reduce, type Effect, type Input, type Key, type TuiState } from './state.js';

export const TUI_HELP = `askrelay tui — answer cards in the terminal

Usage: askrelay tui [--url URL]

Lists the pending cards and follows the relay live (new cards appear; a card answered
elsewhere, expired or cancelled closes with a line saying so; after a lost connection
it reconnects and reloads the pending cards).

  List:  ↑↓ move · Enter or 1-9 open a card · q or Ctrl-C quit
         (1-9 and q act only on an empty input line; anything else is typed there)
  Card:  ↑↓ move · 1-9 or Enter pick · Esc back to the list without answering
         multi-select: Space or 1-9 check, Enter sends the checked options
         Other… types a free-text answer (Enter sends, Esc back); Skip declines
         a question without options asks for words at once (/skip skips the card)
         e shows cut lines whole · PgUp/PgDn scroll a card taller than the terminal
  A card with several questions asks them one after another (← goes back to the
  one before) and sends one answer.

  The list's input line (type, then Enter):
    /question     reopens the card left with Esc (its draft kept), else the oldest
    /question N   opens the Nth card of the list
    /late ID TEXT answers a card that expired or was cancelled (a late answer);
                  the lines under the list say where each answer got to
    /quit         quits
    any other text answers the card left with Esc (else the oldest) as a plain-text
                  reply: an option's number or label, "1, 3" on multi-select, or words
  The last few closed cards stay listed: "Answered c_…: sqlite", "… expired …".

Needs an interactive terminal.

${CLIENT_ENV_HELP}`;

type RawKey = { name?: string; ctrl?: boolean; meta?: boolean; sequence?: string };

/**
 * A keypress as the state machine's keys. Node holds a lone Esc for 500 ms to see whether a
 * sequence follows, so Esc and a key pressed quickly after it arrive as one "meta" key
 * ("\x1b/", "\x1bq", "\x1b\x1b[B"): that is Esc, then the key.
 */
export function toKeys(str: string | undefined, key: RawKey | undefined): Key[] {
  const seq = key?.sequence ?? '';
  if (key?.name !== 'escape' && !key?.ctrl && seq.startsWith('\x1b')) {
    const rest = seq.slice(1);
    if (rest.startsWith('\x1b')) return [{ name: 'escape' }, ...toKeys(undefined, { ...key, meta: false, sequence: rest })];
    if (key?.meta && [...rest].length === 1) {
      return [{ name: 'escape' }, ...toKeys(rest, { name: key.name, sequence: rest })];
    }
  }
  const one = toKey(str, key);
  return one ? [one] : [];
}

function toKey(str: string | undefined, key: RawKey | undefined): Key | undefined {
  const name = key?.name;
  if (key?.ctrl && name === 'c') return { name: 'ctrl-c' };
  // Node reports a lone Esc as {name: "escape", meta: true} (the escape is its own meta prefix).
  if (name === 'escape') return { name };
  if (key?.ctrl || key?.meta) return undefined;
  switch (name) {
    case 'up':
    case 'down':
    case 'left':
    case 'right':
    case 'space':
    case 'backspace':
    case 'tab':
    case 'pageup':
    case 'pagedown':
      return { name };
    case 'return':
    case 'enter':
      return { name: 'enter' };
  }
  if (str && str.length === 1 && str >= ' ') return str === ' ' ? { name: 'space' } : { name: 'char', ch: str };
  if (str && [...str].length === 1 && !/\p{C}/u.test(str)) return { name: 'char', ch: str };
  return undefined;
}

export async function tuiCommand(argv: string[]): Promise<number> {
  const { values, positionals } = parseFlags('tui', () =>
    parseArgs({ args: argv, allowPositionals: true, strict: true, options: { url: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }),
  );
  if (values.help) {
    console.log(TUI_HELP);
    return 0;
  }
  if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}". Run "askrelay tui --help".`);
  if (!process.stdin.isTTY || !process.stdout.isTTY) throw new UsageError('askrelay tui needs an interactive terminal; use "askrelay cards" and "askrelay answer" in scripts.');

  const target = findRelay(values.url);
  const client = new RelayClient(target);
  const out = process.stdout;
  let state: TuiState = initialState();
  let finish: (code: number) => void = () => {};
  const done = new Promise<number>((resolve) => (finish = resolve));

  const draw = () => {
    const width = out.columns || 80;
    const lines = render(state, Date.now(), width, out.rows || 24);
    // Home, then each line with the rest of it cleared, then clear below.
    out.write(`\x1b[H${lines.map((l) => `${l}\x1b[K`).join('\r\n')}\x1b[J`);
  };

  const perform = (effect: Effect) => {
    if (effect.type === 'quit') return finish(0);
    const call =
      effect.type === 'answer' ? client.answer(effect.cardId, effect.answers) : effect.type === 'reply' ? client.reply(effect.cardId, effect.text, { late: effect.late }) : client.skip(effect.cardId);
    call.then(
      (card) => dispatch({ type: 'sent', card }),
      (err: unknown) => dispatch({ type: 'failed', cardId: effect.cardId, message: err instanceof ApiError ? err.message : (err as Error).message }),
    );
  };

  function dispatch(input: Input) {
    const step = reduce(state, input);
    state = step.state;
    draw();
    step.effects.forEach(perform);
  }

  out.write('\x1b[?1049h\x1b[?25l\x1b[2J');
  const restore = () => out.write('\x1b[?25h\x1b[?1049l');
  process.on('exit', restore);
  emitKeypressEvents(process.stdin);
  process.stdin.setRawMode(true);
  process.stdin.resume();
  const onKeypress = (str: string | undefined, key: RawKey | undefined) => {
    for (const k of toKeys(str, key)) dispatch({ type: 'key', key: k });
  };
  process.stdin.on('keypress', onKeypress);
  const onResize = () => {
    out.write('\x1b[2J');
    draw();
  };
  out.on('resize', onResize);
  const ticker = setInterval(draw, 1000);

  const stream = followEvents(target, {
    async onOpen() {
      // Connected first, then loaded: an event in between is applied on top of the list.
      const cards = await client.listCards('pending');
      dispatch({ type: 'cards', cards });
      dispatch({ type: 'connection', connection: 'live' });
    },
    onCard: (card) => dispatch({ type: 'card', card }),
    onLost: (reason) => dispatch({ type: 'connection', connection: 'lost', reason }),
  });
  draw();

  const code = await done;
  stream.stop();
  clearInterval(ticker);
  process.stdin.off('keypress', onKeypress);
  out.off('resize', onResize);
  process.stdin.setRawMode(false);
  process.stdin.pause();
  restore();
  process.off('exit', restore);
  return code;
}
