// DOM helpers and the page's fixed elements. Card text comes from agents and is untrusted:
// it reaches the page through textContent and attribute values, or rendered by markdown-it
// with raw HTML off (markdown-view.js), never as markup of its own.
import { store } from './store.js';

export const $ = (sel, root = document) => root.querySelector(sel);

export const els = {
  login: $('[data-testid="login"]'),
  loginForm: $('[data-testid="login"] form'),
  tokenInput: $('[data-testid="token-input"]'),
  loginError: $('[data-testid="login-error"]'),
  loginSubmit: $('[data-testid="login-submit"]'),
  board: $('[data-testid="board"]'),
  pending: $('[data-testid="pending-cards"]'),
  recent: $('[data-testid="recent"]'),
  recentList: $('[data-testid="recent-cards"]'),
  recentLink: $('[data-testid="recent-link"]'),
  empty: $('[data-testid="empty"]'),
  count: $('[data-testid="pending-count"]'),
  keyHint: $('[data-testid="key-hint"]'),
  undoSeconds: $('[data-testid="undo-seconds"]'),
  conn: $('[data-testid="connection"]'),
  outage: $('[data-testid="outage"]'),
  logout: $('[data-testid="logout"]'),
  who: $('[data-testid="who"]'),
  tabs: $('[data-testid="tabs"]'),
  tabCardsCount: $('[data-testid="tab-cards-count"]'),
  tabSessionsCount: $('[data-testid="tab-sessions-count"]'),
  sessions: $('[data-testid="sessions"]'),
  sessionIndex: $('[data-testid="session-index"]'),
  sessionList: $('[data-testid="session-list"]'),
  sessionsEmpty: $('[data-testid="sessions-empty"]'),
  sessionCount: $('[data-testid="session-count"]'),
  sessionDetail: $('[data-testid="session-detail"]'),
  newSession: $('[data-testid="new-session"]'),
  newSessionForm: $('[data-testid="new-session-form"]'),
  newSessionError: $('[data-testid="new-session-error"]'),
  newSessionCancel: $('[data-testid="new-session-cancel"]'),
  startSession: $('[data-testid="start-session"]'),
  pushToggle: $('[data-testid="push-toggle"]'),
  pushMessage: $('[data-testid="push-message"]'),
  pushMessageText: $('[data-testid="push-message-text"]'),
  pushMessageClose: $('[data-testid="push-message-close"]'),
};

export const nextId = (prefix) => `${prefix}-${++store.uid}`;

/**
 * h('button', {class: 'x', dataset: {testid: 'skip'}, onclick}, 'Skip'): strings become
 * text nodes, so nothing passed here is ever parsed as HTML.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'dataset') {
      for (const [name, v] of Object.entries(value)) if (v !== undefined && v !== null) el.dataset[name] = v;
    }
    else if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else if (key === 'value' || (key in el && typeof value !== 'string')) el[key] = value;
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function setText(el, text) {
  if (el.textContent !== text) el.textContent = text;
}

export function autosize(textarea) {
  textarea.style.height = 'auto';
  textarea.style.height = `${Math.min(textarea.scrollHeight + 2, 240)}px`;
}

export function setDisabled(root, disabled) {
  for (const el of root.querySelectorAll('button, input, textarea, select')) el.disabled = disabled;
}
