// Korean and English. The language comes from the saved choice, else the
// browser's; a switch changes it at once and every page relabels itself
// (pages listen for `langchange`), so a game in progress keeps its socket.

import en from './strings/en.js';
import ko from './strings/ko.js';

const KEY = 'mancala.lang';
const dictionaries = { en, ko };

function initial() {
  const saved = safeGet(KEY);
  if (saved && dictionaries[saved]) return saved;
  const wanted = navigator.language || 'en';
  return wanted.toLowerCase().startsWith('ko') ? 'ko' : 'en';
}

// Private browsing modes may throw on storage; the choice then lasts a visit.
function safeGet(key) {
  try { return localStorage.getItem(key); } catch { return null; }
}

let lang = initial();
document.documentElement.lang = lang;

export function getLang() {
  return lang;
}

export function setLang(next) {
  if (!dictionaries[next] || next === lang) return;
  lang = next;
  try { localStorage.setItem(KEY, next); } catch { /* kept for this visit */ }
  document.documentElement.lang = next;
  applyI18n(document);
  window.dispatchEvent(new CustomEvent('langchange', { detail: next }));
}

export function t(key, params = {}) {
  const value = dictionaries[lang][key] ?? dictionaries.en[key];
  if (value === undefined) return key;
  if (typeof value === 'function') return value(params);
  return value.replace(/\{(\w+)\}/g, (whole, name) => (name in params ? String(params[name]) : whole));
}

export function has(key) {
  return key in dictionaries[lang] || key in dictionaries.en;
}

// Static labels in markup carry their key, so one pass relabels them.
export function applyI18n(root) {
  for (const el of root.querySelectorAll('[data-i18n]')) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll('[data-i18n-aria]')) el.setAttribute('aria-label', t(el.dataset.i18nAria));
  for (const el of root.querySelectorAll('[data-i18n-placeholder]')) el.placeholder = t(el.dataset.i18nPlaceholder);
}

// Numbers and dates follow the chosen language, not the browser's.
export function locale() {
  return lang === 'ko' ? 'ko-KR' : 'en-US';
}
