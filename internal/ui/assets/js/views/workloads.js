// Workloads: the list, and one workload with its groups, why what is
// pending is pending, its deployment (canaries: promote, fail), its
// versions (revert), allocations and events. Live; actions say what the
// token lacks when the API refuses them.
import * as api from '../api.js';
import { h, clear, table, badge, link, count, time, ago, toast } from '../dom.js';
import { errorBox, errorText } from '../errors.js';
import { whyPending } from './whypending.js';
import { allocColumns } from './allocations.js';
import { VirtualList } from '../virtual-list.js';
import { allocTable } from '../tables.js';

const wlHref = (name) => `#/workloads/${encodeURIComponent(name)}`;

export function workloadList(root, _p, { signal }) {
  const err = h('div'), body = h('div', { class: 'panel' });
  root.append(h('div', { class: 'toolbar' }, h('h2', {}, 'Workloads'), h('span', { class: 'spacer' }), link('#/run', 'Run a workload →')), err, body);
  api.watch('/v1/workloads', { namespace: api.namespace() }, {
    signal,
    onData: (list) => {
      clear(err);
      clear(body, list?.length ? table(['name', 'status', 'priority', { label: 'version', num: true }, { label: 'desired', num: true },
        { label: 'running', num: true }, { label: 'pending', num: true }, { label: 'failed', num: true }],
      list.map((w) => h('tr', { dataset: { workload: w.name } }, h('td', {}, link(wlHref(w.name), w.name)), h('td', {}, badge(w.status)),
        h('td', {}, `${w.priorityClass}/${w.priority}`), h('td', { class: 'num' }, w.version), h('td', { class: 'num' }, count(w.desired)),
        h('td', { class: 'num' }, count(w.running)), h('td', { class: 'num' }, count(w.pending)), h('td', { class: 'num' }, count(w.failed)))))
        : h('p', { class: 'muted' }, `No workloads in namespace ${api.namespace()}. `, link('#/run', 'Run one.')));
    },
    onError: (e) => clear(err, errorBox(e, 'workloads')),
  });
}

// act runs an action and says how it went; a refusal names what the
// token lacks.
export async function act(label, f) {
  try {
    await f();
    toast(`${label}: done`);
  } catch (err) {
    toast(`${label}: ${errorText(err)}`, true);
  }
}

export function workloadDetail(root, [name], { signal }) {
  const ns = api.namespace(), q = { namespace: ns };
  const base = `/v1/workloads/${encodeURIComponent(name)}`;
  const err = h('div'), head = h('div'), groups = h('div', { class: 'panel' }), why = h('div'),
    deploy = h('div', { class: 'panel', id: 'deployment' }), versions = h('div', { class: 'panel', id: 'versions' }),
    evs = h('div', { class: 'panel' });
  const allocs = new VirtualList(allocColumns(), { height: '320px', onOpen: (a) => { location.hash = `#/allocations/${a.id}`; }, empty: 'no allocations' });
  root.append(head, err, groups, why, h('div', { class: 'two' }, deploy, versions),
    h('div', { class: 'panel' }, h('h3', {}, 'Allocations'), allocs.el), evs);
  let status = null, nodes = null;

  function drawStatus() {
    const w = status.workload;
    clear(head, h('div', { class: 'toolbar' }, h('h2', {}, w.name), badge(status.status),
      h('span', { class: 'muted' }, `version ${w.version} · ${w.priorityClass}/${w.priority} · namespace ${w.namespace}`),
      h('span', { class: 'spacer' }),
      h('button', { class: 'danger', id: 'stop-workload', onclick: () => confirm(`Stop ${w.name}? Its allocations are stopped.`) &&
        act(`stop ${w.name}`, () => api.request('DELETE', base, { query: q })) }, 'Stop')));
    clear(groups, h('h3', {}, 'Groups'), table(['group', { label: 'desired', num: true }, { label: 'pending', num: true }, { label: 'running', num: true },
      { label: 'healthy', num: true }, { label: 'failed', num: true }, { label: 'lost', num: true }, 'why not all'],
    status.groups.map((g) => h('tr', {}, h('td', {}, g.name), h('td', { class: 'num' }, g.desired), h('td', { class: 'num' }, g.pending),
      h('td', { class: 'num' }, g.running), h('td', { class: 'num' }, g.healthy), h('td', { class: 'num' }, g.failed), h('td', { class: 'num' }, g.lost),
      h('td', { class: 'small' }, g.failure?.summary || g.deadReason || '')))),
    status.unenforced?.length ? h('div', { class: 'notice small' }, 'Accepted but not enforced: ', status.unenforced.map((n) => n.message || n.path).join('; ')) : null);
    drawWhy();
  }
  function drawWhy() { if (status) clear(why, whyPending(status, nodes)); }

  api.watch(base, q, { signal, onData: (s) => { clear(err); status = s; drawStatus(); }, onError: (e) => clear(err, errorBox(e, `workload ${name}`)) });
  api.watch('/v1/nodes', { stub: 'true' }, { signal, minInterval: 2000, onData: (n) => { nodes = n || []; drawWhy(); }, onError: () => { nodes = null; drawWhy(); } });
  api.watch(`${base}/deployments`, q, {
    signal,
    onData: (list) => drawDeployment(deploy, list?.[0], q),
    onError: (e) => clear(deploy, h('h3', {}, 'Deployment'), errorBox(e)),
  });
  api.watch(`${base}/versions`, q, {
    signal,
    onData: (list) => clear(versions, h('h3', {}, 'Versions'), table(['version', 'stable', 'submitted', ''],
      [...(list || [])].reverse().map((v, i) => h('tr', { dataset: { version: v.version } }, h('td', {}, v.version), h('td', {}, v.stable ? 'stable' : ''),
        h('td', {}, ago(v.submitTime)), h('td', {}, i === 0 ? h('span', { class: 'muted small' }, 'current')
          : h('button', { class: 'revert', onclick: () => act(`revert ${name} to ${v.version}`, () => api.post(`${base}/revert`, { version: v.version }, { query: q })) }, 'Revert to this')))))),
    onError: (e) => clear(versions, h('h3', {}, 'Versions'), errorBox(e)),
  });
  api.watch('/v1/allocations', { ...q, workload: name, stub: 'true' }, {
    signal, minInterval: 500,
    onData: (data) => allocs.setRows(allocTable(data).sort((a, b) => b.created - a.created)),
    onError: (e) => allocs.el.replaceWith(errorBox(e, 'allocations')),
  });
  api.watch('/v1/events', { ...q, workload: name }, {
    signal,
    onData: (list) => clear(evs, h('h3', {}, 'Events'), table(['time', 'type', 'message'],
      (list || []).slice(-30).reverse().map((e) => h('tr', {}, h('td', { class: 'small' }, time(e.time)), h('td', {}, e.type), h('td', {}, e.message))))),
    onError: (e) => clear(evs, errorBox(e, 'events')),
  });
}

function drawDeployment(el, d, q) {
  if (!d) { clear(el, h('h3', {}, 'Deployment'), h('p', { class: 'muted' }, 'No deployment: every version so far was placed fresh or changed in place.')); return; }
  const running = ['running', 'paused', 'blocked'].includes(d.status);
  const canaries = d.groups.some((g) => g.desiredCanaries > 0 && !g.promoted);
  const path = `/v1/deployments/${encodeURIComponent(d.id)}`;
  clear(el, h('div', { class: 'toolbar' }, h('h3', {}, 'Deployment'), badge(d.status),
    h('span', { class: 'muted small' }, `v${d.fromVersion} → v${d.version}`)),
  d.statusDescription ? h('p', { class: 'small' }, d.statusDescription) : null,
  table(['group', { label: 'desired', num: true }, { label: 'canaries', num: true }, { label: 'placed', num: true },
    { label: 'healthy', num: true }, { label: 'unhealthy', num: true }, { label: 'old running', num: true }, 'promoted'],
  d.groups.map((g) => h('tr', {}, h('td', {}, g.name), h('td', { class: 'num' }, g.desired), h('td', { class: 'num' }, `${g.canaries}/${g.desiredCanaries}`),
    h('td', { class: 'num' }, g.placed), h('td', { class: 'num' }, g.healthy), h('td', { class: 'num' }, g.unhealthy),
    h('td', { class: 'num' }, g.oldRunning), h('td', {}, g.desiredCanaries ? (g.promoted ? 'yes' : 'no') : '—')))),
  running ? h('div', { class: 'actions', style: { marginTop: '8px' } },
    canaries ? h('button', { class: 'primary', id: 'promote', onclick: () => act('promote', () => api.post(`${path}/promote`, {}, { query: q })) }, 'Promote canaries') : null,
    h('button', { class: 'danger', id: 'fail-deployment', onclick: () => act('fail deployment', () => api.post(`${path}/fail`, { reason: 'failed from the web UI' }, { query: q })) }, 'Fail (revert if autoRevert)'))
    : null);
}
