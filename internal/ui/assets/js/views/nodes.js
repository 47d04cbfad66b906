// Nodes: the list (virtualised: a cell may have 10,000), and one node with
// its NUMA nodes, cores and GPU slices, its allocations, and the operator's
// actions: drain, eligibility, quarantine.
import * as api from '../api.js';
import { h, clear, table, badge, link, ago, kv, bytes, cpu, pct, bar, short } from '../dom.js';
import { errorBox } from '../errors.js';
import { VirtualList } from '../virtual-list.js';
import { statusOf, capacityOf, allocatedOf, usageOf } from '../capacity.js';
import { act } from './workloads.js';

const share = (n, d) => (capacityOf(n, d) ? allocatedOf(n, d) / capacityOf(n, d) : 0);

export function nodeList(root, _p, { signal }) {
  const err = h('div'), info = h('span', { class: 'muted small' });
  const filter = h('input', { id: 'node-filter', placeholder: 'filter: name, status, label value…', size: 36 });
  const list = new VirtualList([
    { label: 'name', width: 'minmax(140px, 1.4fr)', text: (n) => n.name, cls: () => 'id' },
    { label: 'status', width: '110px', text: (n) => statusOf(n), cls: (n) => `badge s-${statusOf(n)}` },
    { label: 'region', width: '90px', text: (n) => n.labels?.region || '' },
    { label: 'zone', width: '90px', text: (n) => n.labels?.zone || '' },
    { label: 'rack', width: '90px', text: (n) => n.labels?.rack || '' },
    { label: 'cpu %', width: '70px', text: (n) => pct(share(n, 'cpu')) },
    { label: 'cpu alloc', width: '110px', text: (n) => `${cpu(allocatedOf(n, 'cpu'))}/${cpu(capacityOf(n, 'cpu'))}` },
    { label: 'memory', width: '140px', text: (n) => `${bytes(allocatedOf(n, 'memory'))}/${bytes(capacityOf(n, 'memory'))}` },
    { label: 'gpus', width: '60px', text: (n) => (n.gpuCount ? String(n.gpuCount) : '') },
    { label: 'heartbeat', width: '90px', text: (n) => ago(n.lastHeartbeat) },
  ], { onOpen: (n) => { location.hash = `#/nodes/${encodeURIComponent(n.id)}`; }, empty: 'no nodes' });
  list.el.id = 'node-list';
  root.append(h('div', { class: 'toolbar' }, h('h2', {}, 'Nodes'), filter, info), err, list.el);
  let all = [];
  const apply = () => {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    const rows = words.length ? all.filter((n) => words.every((w) => n.name.toLowerCase().includes(w) || statusOf(n) === w ||
      Object.values(n.labels || {}).some((v) => v.toLowerCase() === w))) : all;
    list.setRows(rows);
    info.textContent = `${rows.length.toLocaleString('en-US')} of ${all.length.toLocaleString('en-US')}`;
  };
  filter.addEventListener('input', apply);
  api.watch('/v1/nodes', { stub: 'true' }, {
    signal, minInterval: 1000,
    onData: (data) => { clear(err); all = (data || []).sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true })); apply(); },
    onError: (e) => clear(err, errorBox(e, 'nodes')),
  });
}

export function nodeDetail(root, [id], { signal }) {
  const base = `/v1/nodes/${encodeURIComponent(id)}`;
  const err = h('div'), head = h('div'), actions = h('div', { class: 'panel', id: 'node-actions' }), hw = h('div', { class: 'panel', id: 'hardware' }),
    allocs = h('div', { class: 'panel' });
  root.append(head, err, h('div', { class: 'two' }, h('div', {}, actions, hw), allocs));
  let actionsFor = '';
  api.watch(`${base}/status`, {}, {
    signal,
    onData: (st) => {
      clear(err);
      const n = st.node;
      clear(head, h('div', { class: 'toolbar' }, h('h2', {}, n.name), badge(statusOf(n)),
        h('span', { class: 'muted' }, Object.entries(n.labels || {}).map(([k, v]) => `${k}=${v}`).join(' · '))),
      kv([['id', h('span', { class: 'mono' }, n.id)], ['status', `${n.status}${n.statusReason ? ` (${n.statusReason})` : ''}`],
        ['heartbeat', ago(n.lastHeartbeat)], ['drivers', (n.drivers || []).join(', ') || 'exec, mock'],
        ['cpu', `${cpu(allocatedOf(n, 'cpu'))} of ${cpu(capacityOf(n, 'cpu'))} cores allocated (${pct(share(n, 'cpu'))})${usageOf(n, 'cpu') !== null ? `, ${cpu(usageOf(n, 'cpu'))} used` : ''}`],
        ['memory', `${bytes(allocatedOf(n, 'memory'))} of ${bytes(capacityOf(n, 'memory'))} allocated (${pct(share(n, 'memory'))})${usageOf(n, 'memory') !== null ? `, ${bytes(usageOf(n, 'memory'))} used` : ''}`],
        n.drain ? ['drain', `since ${ago(n.drain.startedAt)}, deadline ${ago(n.drain.deadline)}; ${st.remaining} allocation(s) left to move`] : null,
        n.quarantine ? ['quarantine', `${n.quarantine.auto ? 'automatic: ' : ''}${n.quarantine.reason} (since ${ago(n.quarantine.since)})`] : null].filter(Boolean)));
      const key = `${n.eligibility}|${!!n.drain}|${!!n.quarantine}|${n.status}`;
      if (key !== actionsFor) { actionsFor = key; drawActions(actions, n, base); }
      drawHardware(hw, n, st.allocations || []);
      clear(allocs, h('h3', {}, `Allocations (${(st.allocations || []).length})`), table(['id', 'workload', 'group', 'status', 'cpu', 'memory'],
        (st.allocations || []).map((a) => h('tr', {}, h('td', {}, link(`#/allocations/${a.id}`, short(a.id))),
          h('td', {}, link(`#/workloads/${encodeURIComponent(a.workload)}`, a.workload)), h('td', {}, `${a.group}[${a.index}]`),
          h('td', {}, badge(a.clientStatus)), h('td', {}, cpu(a.resources?.cpuMilli)), h('td', {}, bytes(a.resources?.memoryBytes))))));
    },
    onError: (e) => clear(err, errorBox(e, `node ${id}`)),
  });
}

function drawActions(el, n, base) {
  const deadline = h('input', { id: 'drain-deadline', value: '1h', size: 6, title: 'how long the drain may move allocations under their disruption budgets' });
  const reason = h('input', { id: 'quarantine-reason', placeholder: 'reason', size: 24 });
  const eligible = n.eligibility !== 'ineligible';
  clear(el, h('h3', {}, 'Operate'),
    h('div', { class: 'actions' },
      n.drain ? h('button', { id: 'drain-cancel', onclick: () => act(`cancel drain of ${n.name}`, () => api.post(`${base}/drain`, { cancel: true })) }, 'Cancel drain')
        : [h('button', { class: 'danger', id: 'drain', onclick: () => act(`drain ${n.name}`, () => api.post(`${base}/drain`, { deadline: deadline.value })) }, 'Drain'), 'deadline', deadline],
      h('button', { id: 'eligibility', onclick: () => act(`${eligible ? 'cordon' : 'uncordon'} ${n.name}`, () => api.post(`${base}/eligibility`, { eligible: !eligible })) },
        eligible ? 'Mark ineligible' : 'Mark eligible')),
    h('div', { class: 'actions', style: { marginTop: '8px' } },
      n.quarantine ? h('button', { id: 'quarantine-lift', onclick: () => act(`lift quarantine of ${n.name}`, () => api.post(`${base}/quarantine`, { lift: true })) }, 'Lift quarantine')
        : [h('button', { class: 'danger', id: 'quarantine', onclick: () => act(`quarantine ${n.name}`, () => api.post(`${base}/quarantine`, { reason: reason.value || 'quarantined from the web UI' })) }, 'Quarantine'), reason]));
}

// drawHardware shows the node's NUMA nodes with their cores (taken by an
// allocation's exclusive assignment or free) and its GPUs with the share
// allocated (whole or fractional).
function drawHardware(el, n, allocs) {
  const coreOwner = new Map(), gpuMilli = new Map();
  for (const a of allocs) {
    for (const c of a.assignment?.cpus || []) coreOwner.set(c, a);
    const gs = a.assignment?.gpus || [];
    for (const g of gs) gpuMilli.set(g, (gpuMilli.get(g) || 0) + (a.assignment.gpuMilli && gs.length === 1 ? a.assignment.gpuMilli : 1000));
  }
  const numa = n.numa?.length ? n.numa : [{ id: 0, cpus: [], memoryBytes: n.capacity?.memoryBytes }];
  clear(el, h('h3', {}, 'NUMA, cores and GPUs'),
    numa.map((z) => h('div', { class: 'numa', dataset: { numa: z.id } },
      h('div', { class: 'small' }, h('strong', {}, `NUMA ${z.id}`), ` · ${z.cpus.length} cores · ${bytes(z.memoryBytes)}${z.tier ? ` · ${z.tier} tier` : ''}`),
      h('div', { class: 'cores' }, z.cpus.map((c) => {
        const a = coreOwner.get(c);
        return h('div', { class: `core ${a ? 'taken' : ''}`, title: a ? `core ${c}: ${a.workload} ${a.group}[${a.index}]` : `core ${c}: free (shared pool)` }, c);
      })),
      h('div', { class: 'cores' }, (n.gpus || []).filter((g) => g.numa === z.id || (g.numa < 0 && z.id === numa[0].id)).map((g) => {
        const m = Math.min(1000, gpuMilli.get(g.id) || 0);
        return h('div', { class: 'gpu', title: `GPU ${g.id}: ${m / 10}% allocated` }, h('div', { class: 'fill', style: { width: `${m / 10}%` } }),
          h('span', {}, `GPU ${g.id} ${g.model}`), h('br'), h('span', { class: 'muted' }, `${m}/1000m`));
      })))),
    h('p', { class: 'small muted' }, 'Blue cores are pinned exclusively to an allocation; the rest are the shared pool. A GPU fills with its allocated share.'));
}
