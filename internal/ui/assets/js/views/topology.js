// Topology drill-down: region → zone → rack → node, as a heat-map of the
// nodes under the level in view, coloured by allocated, used or
// fragmented capacity. A block opens the level below; a node opens the
// node (NUMA nodes, cores, GPU slices). Live.
import * as api from '../api.js';
import { h, clear, pct, bytes, cpu, link } from '../dom.js';
import { errorBox } from '../errors.js';
import { Heatmap, ramp, rampCSS } from '../heatmap.js';
import { allocatedShare, usedShare, fragmentedShare, statusOf, SHAPES, capacityOf, allocatedOf } from '../capacity.js';

// LEVELS are the topology labels drilled through, widest first.
export const LEVELS = ['region', 'zone', 'rack'];
const NONE = '(none)';

// parsePath reads "region=eu/zone=a" into [['region','eu'], ['zone','a']].
export function parsePath(s) {
  return (s || '').split('/').filter(Boolean).map((p) => p.split('=').map(decodeURIComponent));
}
const pathHref = (path) => `#/topology/${path.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('/')}`;

// childrenOf groups the nodes under path by the next level's label, in
// name order; at the last level every node is its own member of one block.
export function childrenOf(nodes, path) {
  const under = nodes.filter((n) => path.every(([k, v]) => (n.labels?.[k] || NONE) === v));
  const depth = path.length;
  if (depth >= LEVELS.length) return { under, level: 'node', blocks: [{ key: '', label: path.at(-1)?.[1] || 'nodes', nodes: sortByName(under) }] };
  const level = LEVELS[depth], groups = new Map();
  for (const n of under) {
    const v = n.labels?.[level] || NONE;
    if (!groups.has(v)) groups.set(v, []);
    groups.get(v).push(n);
  }
  const blocks = [...groups.entries()].sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))
    .map(([v, ns]) => ({ key: v, label: `${level} ${v}`, nodes: sortByName(ns) }));
  return { under, level, blocks };
}
const sortByName = (ns) => ns.sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));

export default function topology(root, [pathParam], { signal }) {
  const path = parsePath(pathParam);
  let nodes = null;
  let mode = sessionStorage.getItem('strata.heat') || 'allocated';
  let shape = sessionStorage.getItem('strata.shape') || 'medium';
  const err = h('div');
  const canvas = h('canvas', { class: 'heat', id: 'heatmap' });
  const tip = h('div', { class: 'tooltip' });
  const summary = h('div', { class: 'small muted' });
  const heat = new Heatmap(canvas);
  const modeSel = h('select', { id: 'heat-mode', onchange: () => { mode = modeSel.value; sessionStorage.setItem('strata.heat', mode); draw(); } },
    [['allocated', 'allocated (fullest dimension)'], ['used', 'used (reported usage)'], ['fragmented', 'fragmented (free but stranded)']]
      .map(([v, l]) => h('option', { value: v, selected: v === mode }, l)));
  const shapeSel = h('select', { onchange: () => { shape = shapeSel.value; sessionStorage.setItem('strata.shape', shape); draw(); } },
    Object.entries(SHAPES).map(([k, s]) => h('option', { value: k, selected: k === shape }, `for ${s.label}`)));
  const crumbs = h('div', { class: 'crumbs' }, link('#/topology', 'cell'),
    path.map((_, i) => [h('span', { class: 'muted' }, '›'), link(pathHref(path.slice(0, i + 1)), `${path[i][0]} ${path[i][1]}`)]));
  root.append(h('h2', {}, 'Topology'), crumbs, err,
    h('div', { class: 'toolbar' }, 'colour by', modeSel, shapeSel,
      h('span', { class: 'legend' }, '0%', h('span', { class: 'ramp', style: { background: rampCSS } }), '100%',
        h('span', { class: 'ramp', style: { background: '#cfd3da', width: '14px' } }), 'no data', h('span', { class: 'ramp', style: { background: '#444', width: '14px' } }), 'down')),
    summary, h('div', { class: 'heat-wrap' }, canvas, tip));

  function value(n) {
    if (statusOf(n) === 'down') return -1;
    if (mode === 'used') return usedShare(n);
    if (mode === 'fragmented') return fragmentedShare(n, SHAPES[shape].r);
    return allocatedShare(n);
  }
  const color = (n) => { const v = value(n); return v === -1 ? '#444' : ramp(v); };
  const marker = (n) => { const s = statusOf(n); return s === 'ready' || s === 'down' ? null : '#6b5bd2'; };

  function draw() {
    if (!nodes) return;
    const { under, level, blocks } = childrenOf(nodes, path);
    const ms = heat.draw(blocks, color, marker);
    const cap = under.reduce((s, n) => s + capacityOf(n, 'cpu'), 0), al = under.reduce((s, n) => s + allocatedOf(n, 'cpu'), 0);
    summary.textContent = `${under.length.toLocaleString('en-US')} nodes in ${blocks.length} ${level === 'node' ? 'block' : `${level}s`}; CPU ${pct(cap ? al / cap : 0)} allocated; drawn in ${ms.toFixed(0)} ms`;
    if (mode === 'used' && !under.some((n) => n.usage)) summary.textContent += ' — no node reports usage yet (grey)';
  }

  canvas.addEventListener('mousemove', (e) => {
    const r = canvas.getBoundingClientRect();
    const hit = heat.hit(e.clientX - r.left, e.clientY - r.top);
    if (!hit) { tip.style.display = 'none'; return; }
    const n = hit.node;
    tip.textContent = n ? `${n.name} (${statusOf(n)})\nCPU ${cpu(allocatedOf(n, 'cpu'))}/${cpu(capacityOf(n, 'cpu'))} · mem ${bytes(allocatedOf(n, 'memory'))}/${bytes(capacityOf(n, 'memory'))}${capacityOf(n, 'gpu') ? ` · GPU ${allocatedOf(n, 'gpu') / 1000}/${capacityOf(n, 'gpu') / 1000}` : ''}\n${mode} ${value(n) === null ? 'no data' : pct(value(n))}`
      : `${hit.block.label}: ${hit.block.nodes.length} nodes — click to open`;
    Object.assign(tip.style, { display: 'block', left: `${Math.min(e.clientX - r.left + 12, r.width - 260)}px`, top: `${e.clientY - r.top + 12}px` });
  });
  canvas.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
  canvas.addEventListener('click', (e) => {
    const r = canvas.getBoundingClientRect();
    const hit = heat.hit(e.clientX - r.left, e.clientY - r.top);
    if (!hit) return;
    if (hit.node) location.hash = `#/nodes/${encodeURIComponent(hit.node.id)}`;
    else if (path.length < LEVELS.length) location.hash = pathHref([...path, [LEVELS[path.length], hit.block.key]]);
  });
  let width = 0; // redraw when the width changes, not when the map's own height does
  const resize = new ResizeObserver(() => { if (root.clientWidth !== width) { width = root.clientWidth; draw(); } });
  resize.observe(root);
  signal.addEventListener('abort', () => resize.disconnect());

  api.watch('/v1/nodes', { stub: 'true' }, {
    signal, minInterval: 1000,
    onData: (data) => { clear(err); nodes = data || []; draw(); },
    onError: (e) => clear(err, errorBox(e, 'nodes')),
  });
}
