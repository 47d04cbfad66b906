// Incidents: the cell's trouble grouped by what it shares, with the
// probable cause (docs/incidents.md). The leader keeps them in memory, so
// the list is read again every few seconds rather than watched; each
// incident opens with its evidence, the alternatives, its history and a
// link to its events.
import * as api from '../api.js';
import { h, clear, time, link, badge, kv, table } from '../dom.js';
import { errorBox } from '../errors.js';

const every = 5000;

// poll reads path now and every few seconds until signal aborts.
function poll(path, query, { onData, onError, signal }) {
  (async () => {
    while (!signal.aborted) {
      try {
        const { data } = await api.get(path, { query, signal });
        onData(data);
      } catch (err) {
        if (signal.aborted) return;
        onError(err);
        if (err instanceof api.APIError && (err.denied || err.status === 404)) return;
      }
      await new Promise((resolve) => {
        const t = setTimeout(resolve, every);
        signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
      });
    }
  })();
}

const cause = (c) => `${c.noun} ${c.value}`;
const count = (n, noun) => `${n} ${noun}${n === 1 ? '' : 's'}`;

export function incidentList(root, _p, { signal }) {
  const err = h('div'), body = h('div', { id: 'incident-list' });
  root.append(h('div', { class: 'toolbar' }, h('h2', {}, 'Incidents')), err, body);
  poll('/v1/incidents', {}, {
    signal,
    onData: (list) => {
      clear(err);
      if (!list || list.length === 0) {
        clear(body, h('p', { class: 'muted' }, 'No incidents: the cell’s trouble, if any, shares nothing improbable.'));
        return;
      }
      clear(body, table(['status', 'began', 'cause', 'summary'], list.map((in_) =>
        h('tr', { dataset: { incident: in_.id } },
          h('td', {}, badge(in_.status)),
          h('td', {}, time(in_.began)),
          h('td', {}, link(`#/incidents/${encodeURIComponent(in_.id)}`, cause(in_.cause))),
          h('td', {}, in_.summary)))));
    },
    onError: (e) => clear(err, errorBox(e, 'incidents')),
  });
}

export function incidentDetail(root, [id], { signal }) {
  const err = h('div'), body = h('div', { id: 'incident' });
  root.append(h('div', { class: 'toolbar' }, h('h2', {}, 'Incident'), h('span', { class: 'muted small' }, id)), err, body);
  poll(`/v1/incidents/${encodeURIComponent(id)}`, {}, {
    signal,
    onData: (in_) => {
      clear(err);
      const kinds = Object.entries(in_.kinds || {}).map(([k, n]) => `${k} ${n}`).join(', ');
      clear(body,
        h('p', { class: 'summary' }, in_.summary),
        kv([
          ['status', badge(in_.status)],
          ['cause', `${cause(in_.cause)}: ${in_.cause.evidence}`],
          ['began', time(in_.began)],
          ['last', time(in_.last)],
          ['closed', time(in_.closed)],
          ['signals', `${in_.signals} (${kinds}); ${count(in_.allocations, 'allocation')}, ${count(in_.nodes, 'node')}, ${count(in_.workloads, 'workload')}`],
          ['merged into', in_.mergedInto ? link(`#/incidents/${encodeURIComponent(in_.mergedInto)}`, in_.mergedInto) : '—'],
        ]),
        (in_.alternatives || []).length > 0 && h('div', {}, h('h3', {}, 'Also possible'),
          h('ul', {}, in_.alternatives.map((a) => h('li', {}, `${cause(a)}: ${a.evidence}`)))),
        h('h3', {}, 'History'),
        h('ul', { id: 'incident-history' }, (in_.history || []).map((line) => h('li', {}, line))),
        h('p', {}, link(`#/events/${encodeURIComponent(in_.id)}`, 'its events')));
    },
    onError: (e) => clear(err, errorBox(e, 'the incident')),
  });
}
