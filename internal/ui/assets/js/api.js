// The browser's client of the /v1 API: the token the user typed (kept in
// this tab's sessionStorage, sent as X-Strata-Token), the namespace in
// view, errors with the API's code, and live reads through blocking
// queries (?index=N&wait=D), the same the CLI and agents use.

const TOKEN_KEY = 'strata.token';
const NS_KEY = 'strata.namespace';

export function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }
export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t.trim()); else sessionStorage.removeItem(TOKEN_KEY);
}
export function namespace() { return sessionStorage.getItem(NS_KEY) || 'default'; }
export function setNamespace(ns) { sessionStorage.setItem(NS_KEY, ns || 'default'); }

// APIError is an answer that was not 2xx: its status, the API's stable code
// (acl-denied, not-found, ...), its message and the fields it names.
export class APIError extends Error {
  constructor(status, code, message, fields) {
    super(message);
    this.status = status; this.code = code || ''; this.fields = fields || [];
  }
  // denied reports a refusal of the ACLs: the token is missing, unknown,
  // expired, or lacks the capability the message names.
  get denied() { return this.status === 403 && this.code.startsWith('acl'); }
}

function url(path, query) {
  const u = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== '') u.searchParams.set(k, v);
  }
  return u;
}

function headers(extra) {
  const h = new Headers(extra || {});
  const t = token();
  if (t) h.set('X-Strata-Token', t);
  return h;
}

async function failure(resp) {
  let body = {};
  try { body = await resp.json(); } catch { /* not JSON: a proxy's page */ }
  return new APIError(resp.status, body.code || resp.headers.get('X-Strata-Error-Code') || '',
    body.error || `${resp.status} ${resp.statusText}`, body.fields);
}

// request sends one call; it resolves to {data, index} or throws APIError.
export async function request(method, path, { query, body, contentType, signal } = {}) {
  const init = { method, headers: headers(), signal, cache: 'no-store' };
  if (body !== undefined) {
    if (typeof body === 'string') {
      init.body = body;
      init.headers.set('Content-Type', contentType || 'application/yaml');
    } else {
      init.body = JSON.stringify(body);
      init.headers.set('Content-Type', 'application/json');
    }
  }
  const resp = await fetch(url(path, query), init);
  if (!resp.ok) throw await failure(resp);
  const index = Number(resp.headers.get('X-Strata-Index') || 0);
  const text = await resp.text();
  return { data: text ? JSON.parse(text) : null, index };
}

export const get = (path, opts) => request('GET', path, opts);
export const post = (path, body, opts = {}) => request('POST', path, { ...opts, body });

// liveState is what the header's dot shows: whether the views' blocking
// queries are answered.
const listeners = new Set();
export function onLive(f) { listeners.add(f); }
function live(ok) { for (const f of listeners) f(ok); }

const sleep = (ms, signal) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
});

// watch reads path again each time the data under it changes, with a
// blocking query, and calls onData with every new answer. It ends when
// signal aborts, or after a refusal of the ACLs (a new token re-renders
// the view). minInterval spaces reads of large lists (a cell busy with
// 100,000 allocations changes many times a second). onError gets each
// failure; other failures are retried with a growing pause.
export function watch(path, query, { onData, onError, signal, minInterval = 0, wait = '60s' }) {
  (async () => {
    let index = 0, pause = 500;
    while (!signal.aborted) {
      const started = performance.now();
      let answer;
      try {
        const q = { ...query };
        if (index > 0) { q.index = index; q.wait = wait; }
        answer = await request('GET', path, { query: q, signal });
      } catch (err) {
        if (signal.aborted) return;
        if (err instanceof APIError) live(err.status < 500);
        else live(false);
        onError?.(err);
        if (err instanceof APIError && (err.denied || err.status === 404 || err.status === 400)) return;
        await sleep(pause, signal);
        pause = Math.min(pause * 2, 8000);
        continue;
      }
      live(true);
      pause = 500;
      const { data, index: next } = answer;
      // A view's own failure to draw is a bug, not the API's: it is thrown
      // (the browser tests fail on it) and the watch goes on.
      if (next !== index || index === 0) {
        try { onData(data, next); } catch (err) { setTimeout(() => { throw err; }); }
      }
      // An index that went backwards is a restored snapshot: read afresh.
      index = next < index ? 0 : next;
      const spent = performance.now() - started;
      if (minInterval > spent) await sleep(minInterval - spent, signal);
    }
  })();
}

// stream reads a streamed body (a followed log) chunk by chunk.
export async function stream(path, query, { onChunk, signal }) {
  const resp = await fetch(url(path, query), { headers: headers(), signal, cache: 'no-store' });
  if (!resp.ok) throw await failure(resp);
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    onChunk(decoder.decode(value, { stream: true }));
  }
}
