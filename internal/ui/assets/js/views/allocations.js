// Allocations: the whole list, virtualised (100,000 rows open in well
// under a second and scroll without stutter), filtered in the browser; one
// allocation with its tasks, health checks, events and followed logs.
import * as api from '../api.js';
import { h, clear, table, badge, link, short, ago, time, kv, bytes, cpu } from '../dom.js';
import { allocTable } from '../tables.js';
import { errorBox } from '../errors.js';
import { VirtualList } from '../virtual-list.js';

// allocColumns are the columns of a list of allocation stubs.
export function allocColumns() {
  return [
    { label: 'id', width: '90px', text: (a) => short(a.id), cls: () => 'mono id' },
    { label: 'workload', width: 'minmax(120px, 1.2fr)', text: (a) => a.workload },
    { label: 'group', width: 'minmax(90px, 1fr)', text: (a) => `${a.group}[${a.index}]` },
    { label: 'node', width: 'minmax(100px, 1fr)', text: (a) => a.nodeName || short(a.nodeId) },
    { label: 'status', width: '100px', text: (a) => a.clientStatus, cls: (a) => `badge s-${a.clientStatus}` },
    { label: 'desired', width: '70px', text: (a) => a.desiredStatus },
    { label: 'health', width: '90px', text: (a) => a.health || '' },
    { label: 'ver', width: '50px', text: (a) => String(a.workloadVersion) },
    { label: 'restarts', width: '70px', text: (a) => String(a.restarts || 0) },
    { label: 'created', width: '90px', text: (a) => ago(a.created) },
  ];
}

// matches is the list's filter: every word must appear in the id,
// workload, group, node or status.
export function matcher(text, status) {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  return (a) => (!status || a.clientStatus === status) && words.every((w) =>
    a.id.startsWith(w) || a.workload.toLowerCase().includes(w) || a.group.toLowerCase().includes(w) ||
    (a.nodeName || '').toLowerCase().includes(w) || a.clientStatus === w);
}

export function allocationList(root, _p, { signal }) {
  const err = h('div'), info = h('span', { class: 'muted small', id: 'alloc-count' });
  const filter = h('input', { id: 'alloc-filter', placeholder: 'filter: workload, node, id prefix, status…', size: 40 });
  const statusSel = h('select', { id: 'alloc-status' }, ['', 'pending', 'running', 'complete', 'failed', 'lost'].map((s) => h('option', { value: s }, s || 'any status')));
  const list = new VirtualList(allocColumns(), { onOpen: (a) => { location.hash = `#/allocations/${a.id}`; }, empty: 'no allocations' });
  list.el.id = 'alloc-list';
  root.append(h('div', { class: 'toolbar' }, h('h2', {}, 'Allocations'), filter, statusSel, info), err, list.el);
  let all = [];
  const apply = () => {
    const rows = filter.value || statusSel.value ? all.filter(matcher(filter.value, statusSel.value)) : all;
    list.setRows(rows);
    info.textContent = `${rows.length.toLocaleString('en-US')} of ${all.length.toLocaleString('en-US')}`;
  };
  filter.addEventListener('input', apply);
  statusSel.addEventListener('change', apply);
  api.watch('/v1/allocations', { namespace: api.namespace(), stub: 'true' }, {
    signal, minInterval: 2000,
    onData: (data) => {
      const t0 = performance.now();
      clear(err);
      all = allocTable(data).sort((a, b) => b.created - a.created);
      apply();
      list.el.dataset.rows = String(all.length);
      list.el.dataset.renderMs = (performance.now() - t0).toFixed(1);
    },
    onError: (e) => clear(err, errorBox(e, 'allocations')),
  });
}

export function allocationDetail(root, [id], { signal }) {
  const q = { namespace: api.namespace() };
  const err = h('div'), head = h('div'), tasks = h('div', { class: 'panel' }), checks = h('div', { class: 'panel', id: 'checks' }),
    evs = h('div', { class: 'panel', id: 'alloc-events' }), logs = h('div', { class: 'panel', id: 'logs' });
  root.append(head, err, h('div', { class: 'two' }, h('div', {}, tasks, checks), h('div', {}, logs, evs)),
    h('div', { class: 'panel', id: 'exec' }, h('h3', {}, 'Exec'),
      h('p', { class: 'muted small' }, 'A terminal into a running task comes with `strata alloc exec` (issue 22): it will open here, authorised by the exec capability and audited.')));
  let alloc = null, logsStarted = false;

  function draw(a) {
    alloc = a;
    clear(head, h('div', { class: 'toolbar' }, h('h2', { class: 'mono' }, short(a.id)), badge(a.clientStatus),
      h('span', { class: 'muted' }, 'of ', link(`#/workloads/${encodeURIComponent(a.workload)}`, a.workload), ` · ${a.group}[${a.index}] · v${a.workloadVersion} · on `,
        link(`#/nodes/${encodeURIComponent(a.nodeId)}`, a.nodeName || a.nodeId))),
    kv([['id', h('span', { class: 'mono' }, a.id)], ['desired', `${a.desiredStatus}${a.desiredReason ? ` (${a.desiredReason})` : ''}`],
      ['client', `${a.clientStatus}${a.clientReason ? ` (${a.clientReason})` : ''}`], ['created', time(a.createTime)],
      ['resources', `${cpu(a.resources?.cpuMilli)} CPU, ${bytes(a.resources?.memoryBytes)}${a.resources?.gpus ? `, ${a.resources.gpus} GPU` : ''}${a.resources?.gpuMilli ? `, ${a.resources.gpuMilli}m GPU` : ''}`],
      ['assignment', assignment(a.assignment)], a.previousAlloc ? ['replaces', link(`#/allocations/${a.previousAlloc}`, short(a.previousAlloc))] : null].filter(Boolean)));
    const states = Object.entries(a.taskStates || {});
    clear(tasks, h('h3', {}, 'Tasks'), table(['task', 'state', { label: 'restarts', num: true }, 'exit', 'started', 'message'],
      (a.taskGroup?.tasks || []).map((t) => {
        const s = a.taskStates?.[t.name] || {};
        return h('tr', {}, h('td', {}, t.name), h('td', {}, badge(s.state || 'pending')), h('td', { class: 'num' }, s.restarts || 0),
          h('td', {}, s.state === 'dead' ? `${s.exitCode}${s.oomKilled ? ' (OOM)' : ''}${s.signal ? ` sig ${s.signal}` : ''}` : ''),
          h('td', {}, ago(s.startedAt)), h('td', { class: 'small' }, s.message || ''));
      })), states.length ? null : h('p', { class: 'muted small' }, 'The agent has not reported the tasks yet.'));
    const hc = a.health;
    clear(checks, h('h3', {}, 'Health'), hc ? [h('p', {}, badge(hc.status), ' ', hc.reason || '', h('span', { class: 'muted small' }, ` since ${ago(hc.since)}`)),
      hc.checks?.length ? table(['check', 'of', 'type', 'status', 'output'], hc.checks.map((c) => h('tr', {}, h('td', {}, c.name),
        h('td', {}, c.task || c.service || ''), h('td', {}, `${c.type}/${c.purpose}`), h('td', {}, badge(c.status)), h('td', { class: 'small mono' }, c.output || ''))))
        : h('p', { class: 'muted small' }, 'No checks declared.')]
      : h('p', { class: 'muted small' }, 'No health report yet.'));
    if (!logsStarted) { logsStarted = true; logView(logs, a, q, signal); }
  }

  api.watch(`/v1/allocations/${encodeURIComponent(id)}`, q, { signal, onData: (a) => { clear(err); draw(a); drawEvents(); }, onError: (e) => clear(err, errorBox(e, `allocation ${id}`)) });
  // Events name an allocation by its full id: those of this one are shown
  // once both the allocation and the events are read.
  let events = [];
  function drawEvents() {
    if (!alloc) return;
    const mine = events.filter((e) => e.allocId && e.allocId === alloc.id);
    clear(evs, h('h3', {}, 'Events'), mine.length ? table(['time', 'type', 'message'], mine.slice(-30).reverse().map((e) =>
      h('tr', {}, h('td', { class: 'small' }, time(e.time)), h('td', {}, e.type), h('td', {}, e.message))))
      : h('p', { class: 'muted small' }, 'No events name this allocation.'));
  }
  api.watch('/v1/events', q, {
    signal,
    onData: (list) => { events = list || []; drawEvents(); },
    onError: (e) => clear(evs, errorBox(e, 'events')),
  });
}

function assignment(s) {
  if (!s) return '—';
  const parts = [];
  if (s.cpus?.length) parts.push(`cores ${s.cpus.join(',')}`);
  if (s.numaNode >= 0) parts.push(`NUMA ${s.numaNode}`);
  if (s.gpus?.length) parts.push(`GPU ${s.gpus.join(',')}${s.gpuMilli ? ` (${s.gpuMilli}m)` : ''}`);
  if (s.ports?.length) parts.push(`ports ${s.ports.map((p) => `${p.name}:${p.port}`).join(',')}`);
  if (s.devices?.length) parts.push(`devices ${s.devices.join(',')}`);
  return parts.join(' · ') || 'none pinned';
}

// MAX_LOG bounds what the page keeps of a log (a huge log must not eat
// the tab): the oldest text is dropped, and the page says so.
const MAX_LOG = 1 << 20;

function logView(el, a, q, signal) {
  const taskSel = h('select', { id: 'log-task' }, (a.taskGroup?.tasks || []).map((t) => h('option', { value: t.name }, t.name)));
  const streamSel = h('select', { id: 'log-stream' }, h('option', { value: 'stdout' }, 'stdout'), h('option', { value: 'stderr' }, 'stderr'));
  const follow = h('input', { type: 'checkbox', id: 'log-follow', checked: true });
  const pre = h('pre', { class: 'log', id: 'log' });
  const note = h('div');
  el.append(h('div', { class: 'toolbar' }, h('h3', {}, 'Logs'), taskSel, streamSel, h('label', {}, follow, ' follow')), note, pre);
  let ctl = null, dropped = false;
  async function open() {
    ctl?.abort();
    ctl = new AbortController();
    signal.addEventListener('abort', () => ctl.abort(), { once: true });
    pre.textContent = ''; dropped = false; clear(note);
    try {
      await api.stream(`/v1/allocations/${encodeURIComponent(a.id)}/logs`, { ...q, task: taskSel.value, stream: streamSel.value, follow: follow.checked ? 'true' : '' }, {
        signal: ctl.signal,
        onChunk: (text) => {
          const stick = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 20;
          let all = pre.textContent + text;
          if (all.length > MAX_LOG) { all = all.slice(all.length - MAX_LOG); dropped = true; }
          pre.textContent = all;
          if (dropped && !note.firstChild) note.append(h('p', { class: 'small muted' }, 'Older output dropped: the page keeps the last 1 MiB.'));
          if (stick) pre.scrollTop = pre.scrollHeight;
        },
      });
    } catch (err) {
      if (err.name !== 'AbortError') clear(note, errorBox(err, 'logs'));
    }
  }
  taskSel.addEventListener('change', open);
  streamSel.addEventListener('change', open);
  follow.addEventListener('change', open);
  open();
}
