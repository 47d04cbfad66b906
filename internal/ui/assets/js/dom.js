// Small helpers to build the DOM and to word quantities. Text is always set
// as text (never as HTML), so nothing the API returns can inject markup.

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'style') Object.assign(el.style, v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k in el && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

export function clear(el, ...children) { el.replaceChildren(); append(el, children); return el; }

export const link = (href, text) => h('a', { href }, text);

export function badge(status) {
  return h('span', { class: `badge s-${String(status || '').replace(/[^a-z-]/g, '')}` }, status || '—');
}

export function table(headers, rows) {
  return h('table', {},
    h('thead', {}, h('tr', {}, headers.map((c) => h('th', { class: c.num ? 'num' : '' }, c.label ?? c)))),
    h('tbody', {}, rows));
}

export function bar(parts) {
  // parts: [{cls, frac}] drawn over each other, fractions of 0..1.
  return h('div', { class: 'bar' }, parts.filter((p) => p.frac > 0).map((p) =>
    h('span', { class: p.cls, style: { width: `${Math.min(100, p.frac * 100).toFixed(1)}%` } })));
}

export function kv(pairs) {
  return h('div', { class: 'kv' }, pairs.flatMap(([k, v]) => [h('span', {}, k), h('span', {}, v ?? '—')]));
}

export function toast(msg, bad) {
  const t = h('div', { class: `toast ${bad ? 'bad' : ''}` }, msg);
  document.getElementById('toasts').append(t);
  setTimeout(() => t.remove(), bad ? 9000 : 4000);
}

const GiB = 1024 ** 3, MiB = 1024 ** 2;
export function bytes(n) {
  if (!n) return '0';
  if (n >= 1024 * GiB) return `${(n / 1024 / GiB).toFixed(1)} TiB`;
  if (n >= GiB) return `${(n / GiB).toFixed(n >= 100 * GiB ? 0 : 1)} GiB`;
  if (n >= MiB) return `${Math.round(n / MiB)} MiB`;
  return `${Math.round(n / 1024)} KiB`;
}
export function cpu(milli) {
  if (!milli) return '0';
  return milli % 1000 === 0 ? `${milli / 1000}` : `${(milli / 1000).toFixed(milli < 10000 ? 2 : 1)}`;
}
export const pct = (f) => (Number.isFinite(f) ? `${(f * 100).toFixed(f < 0.1 && f > 0 ? 1 : 0)}%` : '—');
export const count = (n) => Number(n || 0).toLocaleString('en-US');
export const short = (id) => (id ? id.slice(0, 8) : '—');

// ago words how long ago t was: an RFC 3339 time or Unix milliseconds.
export function ago(t) {
  if (!t || (typeof t === 'string' && t.startsWith('0001'))) return '—';
  const s = (Date.now() - (typeof t === 'number' ? t : Date.parse(t))) / 1000;
  if (s < 0) return `in ${dur(-s)}`;
  return `${dur(s)} ago`;
}
function dur(s) {
  if (s < 90) return `${Math.round(s)}s`;
  if (s < 5400) return `${Math.round(s / 60)}m`;
  if (s < 2 * 86400) return `${Math.round(s / 3600)}h`;
  return `${Math.round(s / 86400)}d`;
}
export const time = (t) => (t && !t.startsWith('0001') ? new Date(t).toLocaleString() : '—');
