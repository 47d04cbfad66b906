// "Why pending": for each group with copies not placed, every filter with
// the number of nodes it rejected (and their names where the API gives
// them), the score components of the node the scheduler liked best, and
// what change to the request would fit, estimated on the nodes' free
// capacity.
import { h, table, bar, bytes, cpu, count, link } from '../dom.js';
import { groupRequest, reshape } from '../capacity.js';

// whyPending returns the panel for a workload status, or null when
// nothing is pending. nodes may be null (the token cannot read them).
export function whyPending(status, nodes) {
  const groups = (status.groups || []).filter((g) => g.failure || g.pending > 0);
  if (!groups.length) return null;
  const explanations = new Map((status.latestEval?.explanations || []).map((e) => [e.group, e]));
  return h('div', { class: 'panel', id: 'why-pending' }, h('h3', {}, 'Why pending'),
    groups.map((g) => groupWhy(g, explanations.get(g.name), status, nodes)));
}

function groupWhy(g, ex, status, nodes) {
  const f = g.failure;
  const spec = status.workload?.groups?.find((x) => x.name === g.name);
  const rows = filterRows(f, ex);
  const examined = ex?.nodesExamined ?? f?.nodesEvaluated ?? 0;
  return h('div', { class: 'why-group', dataset: { group: g.name } },
    h('p', {}, h('strong', {}, `group ${g.name}: `),
      f ? `${f.missing} not placed; ${count(examined)} nodes examined, ${count(ex?.nodesFeasible ?? 0)} passed every filter.`
        : `${g.pending} pending (placed, not started yet).`),
    f?.summary ? h('p', { class: 'small muted' }, f.summary) : null,
    rows.length ? table(['filter', 'reason', { label: 'nodes rejected', num: true }, '', 'nodes'],
      rows.map((r) => h('tr', {}, h('td', {}, r.filter), h('td', {}, r.reason), h('td', { class: 'num' }, count(r.nodes)),
        h('td', {}, bar([{ cls: 'frag', frac: examined ? r.nodes / examined : 0 }])),
        h('td', { class: 'small' }, r.names?.length ? r.names.slice(0, 12).map((n, i) => [i ? ', ' : '', link(`#/nodes/${encodeURIComponent(n)}`, n)])
          : h('span', { class: 'muted' }, '—'))))) : null,
    ex?.chosen ? scoreOf(ex.chosen) : null,
    f && spec ? fitAdvice(spec, f.missing, nodes) : null);
}

// filterRows merges the explanation's filter counts (filter and reason)
// with the failure's reasons (reason only), the explanation first.
function filterRows(f, ex) {
  const rows = (ex?.filtered || []).map((x) => ({ filter: x.filter, reason: x.reason, nodes: x.nodes, names: x.nodeNames }));
  const seen = new Set(rows.map((r) => r.reason));
  for (const [reason, n] of Object.entries(f?.reasons || {})) {
    if (!seen.has(reason)) rows.push({ filter: '—', reason, nodes: n });
  }
  return rows.sort((a, b) => b.nodes - a.nodes);
}

function scoreOf(c) {
  return h('div', {}, h('p', { class: 'small' }, 'Best candidate ', link(`#/nodes/${encodeURIComponent(c.node)}`, c.nodeName || c.node), `, score ${c.score}:`),
    table(['component', { label: 'score', num: true }], (c.components || []).map((x) => h('tr', {}, h('td', {}, x.name), h('td', { class: 'num' }, x.score)))));
}

function fitAdvice(spec, missing, nodes) {
  if (!nodes) return h('p', { class: 'small muted' }, 'What would fit needs the nodes, which this token cannot read.');
  const req = groupRequest(spec);
  const r = reshape(nodes, req, missing);
  const items = [];
  for (const c of r.changes) {
    if (c.dim === 'replicas') {
      items.push(c.fits ? `${count(c.amount)} of the ${count(c.from)} missing copies fit as asked: lower replicas by ${count(c.from - c.amount)}`
        : 'no copy fits as asked on any schedulable node');
    } else if (c.fits) {
      items.push(`${c.dim} ${c.dim === 'cpu' ? `${cpu(c.from)} → ${cpu(c.amount)} cores` : `${bytes(c.from)} → ${bytes(c.amount)}`} per copy would fit all ${count(missing)}`);
    } else {
      items.push(`no amount of ${c.dim} alone makes all ${count(missing)} fit`);
    }
  }
  return h('div', { class: 'fit-advice' }, h('p', { class: 'small' }, h('strong', {}, 'What would fit'),
    ` (estimate on the schedulable nodes' free CPU, memory and GPUs; constraints, cores and ports are the plan's to check — edit and plan in `, link('#/run', 'Run'), '):'),
  items.length ? h('ul', {}, items.map((t) => h('li', {}, t)))
    : h('p', { class: 'small muted' }, `The free capacity holds ${count(r.fitNow)} copies as asked: what rejects them is a constraint or a filter above, not the size.`));
}
