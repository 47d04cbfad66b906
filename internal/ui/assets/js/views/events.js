// Events: the cell's event list, live, newest first, filtered by type,
// workload, node, incident (#/events/ID) and words. An event the leader
// correlated into an incident names it, and opens it.
import * as api from '../api.js';
import { h, clear, time, short } from '../dom.js';
import { errorBox } from '../errors.js';
import { VirtualList } from '../virtual-list.js';

export default function events(root, [incidentID], { signal }) {
  const err = h('div'), info = h('span', { class: 'muted small' });
  const typeSel = h('select', { id: 'event-type' }, h('option', { value: '' }, 'any type'));
  const wl = h('input', { id: 'event-workload', placeholder: 'workload', size: 14 });
  const node = h('input', { id: 'event-node', placeholder: 'node id', size: 12 });
  const text = h('input', { id: 'event-text', placeholder: 'words in the message', size: 24 });
  const incident = h('input', { id: 'event-incident', placeholder: 'incident', size: 22, value: incidentID || '' });
  const list = new VirtualList([
    { label: 'time', width: '170px', text: (e) => time(e.time) },
    { label: 'type', width: '150px', text: (e) => e.type },
    { label: 'workload', width: '130px', text: (e) => e.workload || '' },
    { label: 'node', width: '90px', text: (e) => (e.nodeId ? short(e.nodeId) : '') },
    { label: 'message', width: 'minmax(300px, 4fr)', text: (e) => e.message },
    { label: 'incident', width: '200px', text: (e) => e.incident || '' },
  ], {
    empty: 'no events match',
    // A row opens what it is about: its allocation, workload or node.
    onOpen: (e) => {
      if (e.type === 'incident' && e.incident) location.hash = `#/incidents/${encodeURIComponent(e.incident)}`;
      else if (e.allocId) location.hash = `#/allocations/${e.allocId}`;
      else if (e.workload) location.hash = `#/workloads/${encodeURIComponent(e.workload)}`;
      else if (e.nodeId) location.hash = `#/nodes/${encodeURIComponent(e.nodeId)}`;
    },
  });
  list.el.id = 'event-list';
  root.append(h('div', { class: 'toolbar' }, h('h2', {}, 'Events'), typeSel, wl, node, incident, text, info), err, list.el);
  let all = [];
  const apply = () => {
    const words = text.value.toLowerCase().split(/\s+/).filter(Boolean);
    const rows = all.filter((e) => (!typeSel.value || e.type === typeSel.value) && (!wl.value || e.workload === wl.value.trim()) &&
      (!node.value || (e.nodeId || '').startsWith(node.value.trim())) && (!incident.value || e.incident === incident.value.trim()) &&
      words.every((w) => e.message.toLowerCase().includes(w)));
    list.setRows(rows);
    info.textContent = `${rows.length.toLocaleString('en-US')} of ${all.length.toLocaleString('en-US')}`;
  };
  for (const el of [typeSel, wl, node, incident, text]) el.addEventListener('input', apply);
  api.watch('/v1/events', { namespace: api.namespace() }, {
    signal,
    onData: (data) => {
      clear(err);
      all = [...(data || [])].reverse();
      const types = [...new Set(all.map((e) => e.type))].sort();
      const chosen = typeSel.value;
      clear(typeSel, h('option', { value: '' }, 'any type'), types.map((t) => h('option', { value: t, selected: t === chosen }, t)));
      apply();
    },
    onError: (e) => clear(err, errorBox(e, 'events')),
  });
}
