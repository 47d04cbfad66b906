// How a view says that something failed: a refusal of the ACLs says what
// the token lacks (the API's message names the capability and namespace);
// anything else says what went wrong. Nothing of the token is shown.
import { h } from './dom.js';
import { APIError } from './api.js';

export function errorBox(err, what) {
  if (err instanceof APIError && err.denied) {
    const missing = /lacks (capability "[^"]+" (?:on the cell|in namespace "[^"]*"))/.exec(err.message);
    const title = err.code === 'acl-no-token'
      ? 'This cell has ACLs on: enter a token (Token, top right)'
      : missing ? `Your token lacks ${missing[1]}` : 'Your token may not do this';
    return h('div', { class: 'denied', dataset: { code: err.code } },
      h('strong', {}, title), what ? h('div', {}, `${what}: ${err.message}`) : h('div', {}, err.message));
  }
  const msg = err instanceof APIError ? `${err.message}${err.code ? ` (${err.code})` : ''}` : String(err?.message || err);
  return h('div', { class: 'error' }, what ? `${what}: ${msg}` : msg,
    err?.fields?.length ? h('ul', {}, err.fields.map((f) => h('li', {}, `${f.path}: ${f.message}`))) : null);
}

// errorText is the same as one line, for a toast.
export function errorText(err) {
  if (err instanceof APIError && err.denied) {
    const missing = /lacks (capability "[^"]+" (?:on the cell|in namespace "[^"]*"))/.exec(err.message);
    return missing ? `Your token lacks ${missing[1]}` : err.message;
  }
  return err?.message || String(err);
}
