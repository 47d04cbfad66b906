// The shell: the header (views, namespace, token), the hash router, and
// each view's lifetime. A view is render(root, params, ctx); ctx.signal
// aborts when the user leaves the view, which ends its live queries.
import * as api from './api.js';
import { h, clear } from './dom.js';
import { errorBox } from './errors.js';
import overview from './views/overview.js';
import topology from './views/topology.js';
import { workloadList, workloadDetail } from './views/workloads.js';
import run from './views/run.js';
import { allocationList, allocationDetail } from './views/allocations.js';
import { nodeList, nodeDetail } from './views/nodes.js';
import events from './views/events.js';
import { incidentList, incidentDetail } from './views/incidents.js';

// Routes: #/name/param/... -> the view and its parameters.
const routes = [
  [/^overview$/, overview, 'overview'],
  [/^topology(?:\/(.*))?$/, topology, 'topology'],
  [/^workloads$/, workloadList, 'workloads'],
  [/^workloads\/([^/]+)$/, workloadDetail, 'workloads'],
  [/^run(?:\/([^/]+))?$/, run, 'run'],
  [/^allocations$/, allocationList, 'allocations'],
  [/^allocations\/([^/]+)$/, allocationDetail, 'allocations'],
  [/^nodes$/, nodeList, 'nodes'],
  [/^nodes\/([^/]+)$/, nodeDetail, 'nodes'],
  [/^events(?:\/([^/]+))?$/, events, 'events'],
  [/^incidents$/, incidentList, 'incidents'],
  [/^incidents\/([^/]+)$/, incidentDetail, 'incidents'],
];

let current = null;

function navigate() {
  const path = decodeURI(location.hash.replace(/^#\/?/, '')) || 'overview';
  current?.abort();
  current = new AbortController();
  const root = document.getElementById('view');
  clear(root);
  for (const [re, view, nav] of routes) {
    const m = re.exec(path);
    if (!m) continue;
    for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.view === nav);
    try {
      view(root, m.slice(1).map((p) => (p === undefined ? undefined : decodeURIComponent(p))), { signal: current.signal, rerender: navigate });
    } catch (err) {
      root.append(errorBox(err));
    }
    return;
  }
  root.append(h('div', { class: 'error' }, `no such view: ${path}`));
}

function setupNamespace() {
  const input = document.getElementById('namespace');
  input.value = api.namespace();
  input.addEventListener('change', () => { api.setNamespace(input.value.trim()); navigate(); });
  // The list of namespaces is the cell's to read; a token without it may
  // still type its own.
  api.get('/v1/namespaces').then(({ data }) => {
    clear(document.getElementById('namespaces'), (data || []).map((n) => h('option', { value: n.name })));
  }).catch(() => {});
}

async function describeToken(out) {
  if (!api.token()) { out.textContent = 'No token: requests are anonymous.'; return; }
  try {
    const { data } = await api.get('/v1/acl/token/self');
    out.textContent = `Token "${data.name}" (accessor ${data.accessorId.slice(0, 8)}): ${data.management ? 'management' : `policies ${(data.policies || []).join(', ') || 'none'}`}`;
  } catch (err) {
    out.textContent = err.code === 'acl-disabled' || err.status === 400 ? 'ACLs are off on this cell.' : err.message;
  }
}

function setupToken() {
  const dialog = document.getElementById('token-dialog');
  const input = document.getElementById('token-input');
  const who = document.getElementById('token-who');
  const button = document.getElementById('token-button');
  const label = () => { button.textContent = api.token() ? 'Token ✓' : 'Token'; };
  label();
  button.addEventListener('click', () => { input.value = ''; describeToken(who); dialog.showModal(); input.focus(); });
  dialog.addEventListener('close', () => {
    if (dialog.returnValue === 'save' && input.value.trim()) api.setToken(input.value);
    if (dialog.returnValue === 'clear') api.setToken('');
    input.value = '';
    if (dialog.returnValue !== 'cancel') { label(); navigate(); }
  });
}

function setupLive() {
  const dot = document.getElementById('live');
  api.onLive((ok) => { dot.className = `live ${ok ? 'on' : 'err'}`; dot.title = ok ? 'live' : 'the API does not answer; retrying'; });
}

setupNamespace();
setupToken();
setupLive();
window.addEventListener('hashchange', navigate);
navigate();
