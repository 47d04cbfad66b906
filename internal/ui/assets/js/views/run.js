// Run a workload from the browser, through the plan step: the spec is
// planned (POST /v1/workloads/plan, a dry run of the scheduler on the
// cell's state), the diff, the placements and what would not fit are
// shown, and only the spec that was planned can be run, registered with
// the plan's check index (nothing changed in between).
import * as api from '../api.js';
import { h, clear, table, count, badge } from '../dom.js';
import { errorBox } from '../errors.js';

const EXAMPLE = `apiVersion: strata.dev/v1
kind: Workload
metadata:
  name: hello
spec:
  groups:
    - name: hello
      replicas: 1
      tasks:
        - name: hello
          command: ["/bin/sh", "-c", "while true; do echo hello from strata; sleep 2; done"]
          resources:
            cpu: 100m
            memory: 32Mi
`;

export default function run(root, _p, { signal }) {
  const spec = h('textarea', { class: 'spec', id: 'spec', spellcheck: false });
  spec.value = sessionStorage.getItem('strata.spec') || EXAMPLE;
  const out = h('div', { id: 'plan-result' });
  const planBtn = h('button', { class: 'primary', id: 'plan' }, 'Plan');
  const runBtn = h('button', { id: 'run', disabled: true }, 'Run');
  root.append(h('h2', {}, 'Run a workload'),
    h('p', { class: 'muted small' }, `Namespace ${api.namespace()}. Plan first: the scheduler runs on the cell's current state and nothing is written. Run registers exactly the planned spec, and only if the workload did not change since.`),
    h('div', { class: 'panel' }, spec, h('div', { class: 'toolbar', style: { marginTop: '8px' } }, planBtn, runBtn)), out);
  let planned = null; // {text, checkIndex}
  spec.addEventListener('input', () => {
    sessionStorage.setItem('strata.spec', spec.value);
    if (planned && planned.text !== spec.value) { runBtn.disabled = true; runBtn.title = 'the spec changed since the plan: plan again'; }
  });
  planBtn.addEventListener('click', async () => {
    const text = spec.value;
    planBtn.disabled = true;
    try {
      const { data } = await api.post('/v1/workloads/plan', text, { query: { namespace: api.namespace() }, signal });
      planned = { text, checkIndex: data.checkIndex, name: data.workload };
      clear(out, planView(data));
      runBtn.disabled = false; runBtn.title = '';
    } catch (err) {
      planned = null; runBtn.disabled = true;
      clear(out, errorBox(err, 'plan'));
    } finally { planBtn.disabled = false; }
  });
  runBtn.addEventListener('click', async () => {
    if (!planned || planned.text !== spec.value) return;
    runBtn.disabled = true;
    try {
      const { data } = await api.post('/v1/workloads', planned.text, { query: { namespace: api.namespace(), checkIndex: String(planned.checkIndex) }, signal });
      location.hash = `#/workloads/${encodeURIComponent(data.name)}`;
    } catch (err) {
      out.prepend(errorBox(err, 'run'));
      runBtn.disabled = false;
    }
  });
}

function planView(p) {
  const blocked = (p.failures || []).length > 0;
  return h('div', {},
    h('div', { class: 'panel', id: 'plan-summary' }, h('h3', {}, `Plan for ${p.workload} `, badge(blocked ? 'blocked' : 'ready')),
      table(['group', { label: 'place', num: true }, { label: 'in place', num: true }, { label: 'stop', num: true }, { label: 'preempt', num: true }, 'how'],
        (p.groups || []).map((g) => h('tr', { dataset: { group: g.name } }, h('td', {}, g.name), h('td', { class: 'num' }, count(g.place)),
          h('td', { class: 'num' }, count(g.inPlace)), h('td', { class: 'num' }, count(g.stop)), h('td', { class: 'num' }, count(g.preempt)),
          h('td', { class: 'small' }, g.rolling || (g.place ? 'placed at once' : '')))))),
    blocked ? h('div', { class: 'panel', id: 'plan-failures' }, h('h3', {}, 'Would not fit'),
      p.failures.map((f) => h('div', {}, h('p', {}, h('strong', {}, `group ${f.group}: `), `${f.missing} not placed, ${count(f.nodesEvaluated)} nodes evaluated`),
        table(['reason', { label: 'nodes', num: true }], Object.entries(f.reasons || {}).sort((a, b) => b[1] - a[1])
          .map(([r, n]) => h('tr', {}, h('td', {}, r), h('td', { class: 'num' }, count(n)))))))) : null,
    h('div', { class: 'panel', id: 'plan-diff' }, h('h3', {}, 'Diff'), (p.diff || []).length
      ? table(['field', 'old', 'new', ''], p.diff.map((d) => h('tr', {}, h('td', { class: 'mono' }, d.path),
        h('td', { class: 'mono diff-old' }, d.old ?? ''), h('td', { class: 'mono diff-new' }, d.new ?? ''), h('td', { class: 'small' }, d.destructive ? 'replaces allocations' : 'in place'))))
      : h('p', { class: 'muted' }, p.checkIndex ? 'No change from the stored version.' : 'A new workload.')),
    [...(p.stops || []), ...(p.preempted || [])].length ? h('div', { class: 'panel' }, h('h3', {}, 'Stops and preemptions'),
      table(['allocation', 'workload', 'group', 'reason'], [...(p.stops || []), ...(p.preempted || [])].map((s) =>
        h('tr', {}, h('td', { class: 'mono' }, s.allocId.slice(0, 8)), h('td', {}, s.workload), h('td', {}, s.group), h('td', {}, s.reason))))) : null,
    p.deployment ? h('p', { class: 'small muted' }, `Starts a deployment v${p.deployment.fromVersion} → v${p.deployment.version}.`) : null);
}
