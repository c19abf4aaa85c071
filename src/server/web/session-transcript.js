// The open session's transcript: entries appended as they arrive, following the bottom.
import { h } from './dom.js';
import { fmtClock, fmtTime } from './format.js';
import { providerName } from './new-session.js';
import { actions } from './store.js';

const ENTRY_WHO = { user: 'You', tool: 'Tool result', system: 'Relay' };

/** Appends the entries not shown yet (a shorter list than shown starts over). */
export function appendTranscript(o, list) {
  const list_ = o.parts.transcript;
  if (list.length < o.count) {
    list_.replaceChildren();
    o.count = 0;
  }
  const root = document.documentElement;
  const nearBottom = window.innerHeight + window.scrollY >= root.scrollHeight - 160;
  const fresh = list.slice(o.count);
  for (const entry of fresh) list_.append(renderEntry(o, entry));
  o.count = list.length;
  if (fresh.length && (o.first || nearBottom)) window.scrollTo(0, root.scrollHeight);
  o.first = false;
}

function renderEntry(o, e) {
  const who = e.role === 'assistant' ? providerName(o.session?.provider) : ENTRY_WHO[e.role] ?? e.role;
  return h('li', { class: `entry entry-${e.role}`, dataset: { testid: 'entry', role: e.role, cardId: e.cardId } },
    h('div', { class: 'entry-head' },
      h('span', { class: 'entry-who' }, who),
      h('time', { class: 'entry-time', datetime: e.at, title: fmtTime(e.at) }, fmtClock(e.at)),
      e.cardId
        ? h('a', {
            class: 'entry-card',
            href: '#cards',
            dataset: { testid: 'entry-card' },
            onclick: (ev) => {
              ev.preventDefault();
              actions.revealCard(e.cardId);
            },
          }, 'Show the card')
        : null,
    ),
    h('div', { class: 'entry-text' }, e.text),
  );
}
