// Cell overview: capacity, allocated against used, fragmentation for a
// reference task shape, nodes by status, workloads by state. Live.
import * as api from '../api.js';
import { h, clear, bar, table, badge, bytes, cpu, pct, count, link } from '../dom.js';
import { errorBox } from '../errors.js';
import { summarize, SHAPES } from '../capacity.js';

const fmt = { cpu: (v) => `${cpu(v)} cores`, memory: bytes, gpu: (v) => `${(v / 1000).toFixed(v % 1000 ? 1 : 0)} GPUs` };

export default function overview(root, _params, { signal }) {
  let nodes = null, workloads = null, shape = sessionStorage.getItem('strata.shape') || 'medium';
  const nodeErr = h('div'), wlErr = h('div');
  const statsEl = h('div', { class: 'grid' });
  const capEl = h('div', { class: 'panel' });
  const statusEl = h('div', { class: 'panel' });
  const wlEl = h('div', { class: 'panel' });
  const shapeSel = h('select', { id: 'shape', onchange: () => { shape = shapeSel.value; sessionStorage.setItem('strata.shape', shape); draw(); } },
    Object.entries(SHAPES).map(([k, s]) => h('option', { value: k, selected: k === shape }, s.label)));
  root.append(h('h2', {}, 'Cell overview'), nodeErr, wlErr, statsEl,
    h('div', { class: 'two' }, capEl, h('div', {}, statusEl, wlEl)));

  function draw() {
    if (nodes) drawNodes();
    if (workloads) drawWorkloads();
  }

  function drawNodes() {
    const s = summarize(nodes, SHAPES[shape].r);
    const usage = s.dims.cpu.hasUsage || s.dims.memory.hasUsage;
    clear(statsEl,
      stat('nodes', count(s.nodes), `${count(s.byStatus.ready || 0)} ready`),
      stat('CPU allocated', pct(s.dims.cpu.allocated / s.dims.cpu.capacity), `${cpu(s.dims.cpu.allocated)} of ${cpu(s.dims.cpu.capacity)} cores`),
      stat('memory allocated', pct(s.dims.memory.allocated / s.dims.memory.capacity), `${bytes(s.dims.memory.allocated)} of ${bytes(s.dims.memory.capacity)}`),
      stat(`room for ${SHAPES[shape].label}`, count(s.copies), `copies, on ${count(s.fitting)} nodes`),
      workloads ? stat('workloads', count(workloads.length), `${count(workloads.filter((w) => w.pending > 0).length)} with pending copies`) : null);
    clear(capEl, h('h3', {}, 'Capacity'),
      h('div', { class: 'toolbar small' }, 'fragmentation judged for a task of', shapeSel),
      table(['', { label: 'capacity', num: true }, 'allocated', 'used', { label: 'free', num: true }, { label: 'fragmented', num: true }],
        ['cpu', 'memory', 'gpu'].filter((d) => s.dims[d].capacity > 0).map((d) => {
          const x = s.dims[d];
          return h('tr', { dataset: { dim: d } }, h('td', {}, d), h('td', { class: 'num' }, fmt[d](x.capacity)),
            h('td', {}, bar([{ cls: 'alloc', frac: x.allocated / x.capacity }]), h('span', { class: 'small muted' }, pct(x.allocated / x.capacity))),
            h('td', {}, x.hasUsage ? [bar([{ cls: 'used', frac: x.used / x.capacity }]), h('span', { class: 'small muted' }, pct(x.used / x.capacity))]
              : h('span', { class: 'muted small' }, 'no usage reported')),
            h('td', { class: 'num' }, fmt[d](x.free)),
            h('td', { class: 'num', title: 'share of free capacity on schedulable nodes where the reference task does not fit' }, pct(x.fragmentation)));
        })),
      usage ? null : h('p', { class: 'small muted' }, 'Used capacity appears here, on the heat-map and on each node once agents report usage to the servers; allocated is what the scheduler reserved.'));
    const order = ['ready', 'draining', 'ineligible', 'quarantined', 'down'];
    const statuses = [...order.filter((k) => s.byStatus[k]), ...Object.keys(s.byStatus).filter((k) => !order.includes(k))];
    clear(statusEl, h('h3', {}, 'Nodes by status'),
      statuses.length ? table(['status', { label: 'nodes', num: true }, ''], statuses.map((k) => h('tr', {}, h('td', {}, badge(k)),
        h('td', { class: 'num' }, count(s.byStatus[k])), h('td', {}, bar([{ cls: 'alloc', frac: s.byStatus[k] / s.nodes }])))))
        : h('p', { class: 'muted' }, 'No nodes have registered yet.'),
      h('p', {}, link('#/nodes', 'All nodes →'), ' ', link('#/topology', 'Topology →')));
  }

  function drawWorkloads() {
    const by = { running: 0, pending: 0, failed: 0, desired: 0 };
    for (const w of workloads) { by.running += w.running; by.pending += w.pending; by.failed += w.failed; by.desired += w.desired; }
    const pending = workloads.filter((w) => w.pending > 0);
    clear(wlEl, h('h3', {}, 'Workloads'),
      table([{ label: 'desired', num: true }, { label: 'running', num: true }, { label: 'pending', num: true }, { label: 'failed', num: true }],
        [h('tr', {}, h('td', { class: 'num' }, count(by.desired)), h('td', { class: 'num' }, count(by.running)),
          h('td', { class: 'num' }, count(by.pending)), h('td', { class: 'num' }, count(by.failed)))]),
      pending.length ? h('div', {}, h('h3', {}, 'Pending: why?'),
        h('ul', {}, pending.slice(0, 10).map((w) => h('li', {}, link(`#/workloads/${encodeURIComponent(w.name)}`, w.name), ` — ${w.pending} pending`))))
        : null,
      h('p', {}, link('#/workloads', 'All workloads →')));
  }

  api.watch('/v1/nodes', { stub: 'true' }, {
    signal, minInterval: 1000,
    onData: (data) => { clear(nodeErr); nodes = data || []; draw(); },
    onError: (err) => clear(nodeErr, errorBox(err, 'nodes')),
  });
  api.watch('/v1/workloads', { namespace: api.namespace() }, {
    signal, minInterval: 500,
    onData: (data) => { clear(wlErr); workloads = data || []; draw(); },
    onError: (err) => clear(wlErr, errorBox(err, 'workloads')),
  });
}

function stat(label, big, sub) {
  return h('div', { class: 'panel stat' }, h('div', { class: 'label' }, label), h('div', { class: 'big' }, big), h('div', { class: 'small muted' }, sub));
}
