import type { Answer, Card } from '../cards/model.js';
import { asAnswered } from '../cards/answer.js';
import { RelayError } from '../errors.js';
import type { Principal } from '../relay/access.js';
import { auditRefusal } from '../relay/audit.js';
import type { CardAccess } from '../relay/card-access.js';
import type { AuditWriter } from '../store/audit-store.js';
import type { AsyncChannelStore } from '../store/channel-store.js';
import { answerSummary, closedNotice } from './card-text.js';
import type { ChannelInbox, InboundAction, InboundOutcome, MessageRef } from './channel.js';
import type { ChannelId } from './config.js';

// People's taps and replies from one channel, under the same rules everywhere: only the
// configured answerers may answer (anyone else is refused politely and audited), a tap
// repeated within a minute is ignored, typed text goes through the plain-text reply
// parser, and the answer goes through the relay core as a human on this channel's surface.

export const REPEAT_WINDOW_MS = 60_000;

export const NOT_AN_ANSWERER = 'Sorry, you are not one of the people who may answer questions here; nothing was changed.';

export interface InboxOptions {
  channel: ChannelId;
  access: CardAccess;
  audit: AuditWriter;
  store: AsyncChannelStore;
  /** Platform user ids allowed to answer; "*" lets anyone in the chat answer. */
  answerers: string[];
  now: () => number;
  /** The person a chat user is linked to: their answers are recorded as that person. */
  people?: { nameOfLink(link: string): Promise<string | undefined> };
}

export class Inbox implements ChannelInbox {
  private readonly recent = new Map<string, number>();
  private readonly anyone: boolean;
  private readonly answerers: Set<string>;

  constructor(private readonly options: InboxOptions) {
    this.anyone = options.answerers.includes('*');
    this.answerers = new Set(options.answerers);
  }

  async tap({ user, cardId, option }: InboundAction & { option: number }): Promise<InboundOutcome> {
    if (this.repeated(`${user}\0${cardId}\0tap\0${option}`)) return { kind: 'ignored' };
    return this.act(user, cardId, async (who, card) => {
      const q = card.questions[0];
      const picked = q?.options[option];
      if (!picked || card.questions.length !== 1) {
        throw new RelayError('unknown_option', 'That button no longer matches the question; answer on the web page.');
      }
      const answer: Answer = { [q.id]: { selected: [picked.label] } };
      return this.options.access.answer(who, cardId, answer);
    });
  }

  /** Typed text; on a card that expired or was cancelled (and has none yet), its late answer. */
  async reply({ user, cardId, text }: InboundAction & { text: string }): Promise<InboundOutcome> {
    if (this.repeated(`${user}\0${cardId}\0reply\0${text}`)) return { kind: 'ignored' };
    const outcome = await this.act(user, cardId, (who, card) => this.options.access.reply(who, cardId, text, undefined, { late: takesLate(card) }), text, true);
    if (outcome.kind !== 'answered' || !outcome.card.lateAnswer || outcome.card.status === 'answered') return outcome;
    return { kind: 'late', card: outcome.card, notice: lateNotice(outcome.card) };
  }

  async beforePrompt({ user, cardId }: InboundAction): Promise<Exclude<InboundOutcome, { kind: 'answered' | 'ignored' }> | undefined> {
    const outcome = await this.act(user, cardId, async (_who, card) => card);
    return outcome.kind === 'answered' || outcome.kind === 'ignored' ? undefined : outcome;
  }

  cardOfMessage(message: string): Promise<string | undefined> {
    return this.options.store.cardOfMessage(this.options.channel, message);
  }

  linkMessage(ref: MessageRef, cardId: string): Promise<void> {
    return this.options.store.link(this.options.channel, ref, cardId);
  }

  recall(key: string): Promise<string | undefined> {
    return this.options.store.recall(this.options.channel, key);
  }

  remember(key: string, value: string): Promise<void> {
    return this.options.store.remember(this.options.channel, key, value);
  }

  card(cardId: string): Promise<Card | undefined> {
    return this.options.access.relay.find(cardId);
  }

  private mayAnswer(user: string): boolean {
    return this.anyone || this.answerers.has(user);
  }

  private async act(user: string, cardId: string, answer: (who: Principal, card: Card) => Promise<Card>, typed?: string, late = false): Promise<InboundOutcome> {
    const card = await this.card(cardId);
    if (!card) return { kind: 'closed', notice: 'This question is no longer known to the relay.' };
    const chatUser = `${this.options.channel}:${user}`;
    const who: Principal = { kind: 'human', id: (await this.options.people?.nameOfLink(chatUser)) ?? chatUser, surface: this.options.channel };
    if (!this.mayAnswer(user)) {
      auditRefusal(this.options.audit, who, card, 'answer', 'not_an_answerer', new Date(this.options.now()));
      return { kind: 'refused', notice: NOT_AN_ANSWERER };
    }
    if (card.status !== 'pending' && !(late && takesLate(card))) return { kind: 'closed', notice: closedNotice(card) };
    try {
      return { kind: 'answered', card: await answer(who, card) };
    } catch (err) {
      if (!(err instanceof RelayError)) throw err;
      const current = await this.card(cardId);
      if (current && current.status !== 'pending' && !(late && takesLate(current))) return { kind: 'closed', notice: closedNotice(current) };
      return { kind: 'invalid', notice: err.code === 'ambiguous_reply' ? slipNotice(err.message, typed) : unechoed(err.message, typed) };
    }
  }

  /** True when the same action came within the last minute (remembering it otherwise). */
  private repeated(key: string): boolean {
    const now = this.options.now();
    for (const [k, at] of this.recent) if (now - at >= REPEAT_WINDOW_MS) this.recent.delete(k);
    if (this.recent.has(key)) return true;
    this.recent.set(key, now);
    return false;
  }
}

/** A card that expired or was cancelled and has no late answer yet: a reply to it is one. */
const takesLate = (card: Card) => (card.status === 'expired' || card.status === 'cancelled') && !card.lateAnswer;

/** What the person who gave a late answer is told (the card's own message stays as it was). */
function lateNotice(card: Card): string {
  return `Kept as a late answer: ${answerSummary(asAnswered(card))}. The agent went on without it; it gets it if it still can.`;
}

/**
 * A reply refused as a slip (a number that is no option's, a label one letter off): the
 * options are listed, and the way to send the words anyway. The quoted slip that opens the
 * parser's sentence is left out, as every notice leaves out what was typed; a bare replace
 * would cut into the labels it resembles ("SQLit" inside "SQLite").
 */
export function slipNotice(message: string, typed: string | undefined): string {
  const at = message.indexOf('" is not one of the options of ');
  const whole = message.startsWith('"') && at > 0 && message.slice(1, at) === typed?.trim();
  const cleaned = at > 0 ? `${whole ? 'That' : 'A part of it'}${message.slice(at + 1)}` : message;
  return `Could not read that as an answer: ${cleaned} To send your words as they are, reply with them in quotes.`;
}

/** The parser's sentence without the person's own words (a chat is not the place to repeat them). */
function unechoed(message: string, typed: string | undefined): string {
  const text = typed?.trim();
  const cleaned = text ? message.split(`"${text}"`).join('That').split(text).join('…') : message;
  return `Could not read that as an answer: ${cleaned}`;
}
