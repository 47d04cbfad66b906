// Pure arithmetic over nodes as the API returns them: what the cell has,
// what is allocated, what is used (when the API reports usage), what is
// fragmented, and what a request would need to fit. No DOM, no fetch: the
// overview, the heat-map and "why pending" share it, and the browser tests
// check it.

// The dimensions shown. gpu counts milli-GPUs: whole GPUs are 1000 each.
export const DIMS = ['cpu', 'memory', 'gpu'];

function amount(r, dim) {
  if (!r) return 0;
  switch (dim) {
    case 'cpu': return r.cpuMilli || 0;
    case 'memory': return r.memoryBytes || 0;
    case 'gpu': return (r.gpus || 0) * 1000 + (r.gpuMilli || 0);
  }
  return 0;
}
export const capacityOf = (n, dim) => amount(n.capacity, dim);
export const allocatedOf = (n, dim) => amount(n.allocated, dim);
// usageOf is what the node's tasks use now, or null: the API does not
// report usage yet (it will, as Node.usage, a Resources); every view
// shows "used" as soon as it does.
export const usageOf = (n, dim) => (n.usage ? amount(n.usage, dim) : null);
export const freeOf = (n, dim) => Math.max(0, capacityOf(n, dim) - allocatedOf(n, dim));

// statusOf is a node's status in one word, operator states first.
export function statusOf(n) {
  if (n.status === 'down') return 'down';
  // A node stub says quarantined and draining; a whole node has the specs.
  if (n.quarantine || n.quarantined || n.status === 'quarantined') return 'quarantined';
  if (n.drain || n.draining || n.status === 'draining') return 'draining';
  if (n.eligibility === 'ineligible') return 'ineligible';
  return n.status || 'unknown';
}
// schedulable nodes take new work.
export const schedulable = (n) => statusOf(n) === 'ready';

// share is the dominant allocated share of a node: its fullest dimension.
export function allocatedShare(n) {
  let s = 0;
  for (const d of DIMS) { const c = capacityOf(n, d); if (c > 0) s = Math.max(s, allocatedOf(n, d) / c); }
  return s;
}
export function usedShare(n) {
  if (!n.usage) return null;
  let s = 0;
  for (const d of DIMS) { const c = capacityOf(n, d); if (c > 0) s = Math.max(s, (usageOf(n, d) || 0) / c); }
  return s;
}

// fits reports whether one more copy of shape (a Resources) fits n's free
// capacity, by the aggregate dimensions only (cores, NUMA, ports and
// devices are the scheduler's to judge).
export function fits(n, shape) {
  for (const d of DIMS) if (amount(shape, d) > freeOf(n, d)) return false;
  return true;
}

// copiesThatFit counts the copies of shape the schedulable nodes' free
// capacity holds, by the aggregate dimensions.
export function copiesThatFit(nodes, shape) {
  let total = 0;
  for (const n of nodes) {
    if (!schedulable(n)) continue;
    let k = Infinity;
    for (const d of DIMS) {
      const want = amount(shape, d);
      if (want > 0) k = Math.min(k, Math.floor(freeOf(n, d) / want));
    }
    if (k !== Infinity) total += k;
  }
  return total;
}

// fragmentedShare is the share of a node's capacity that is free but
// stranded for shape: all of its free capacity when shape does not fit
// (averaged over the dimensions it has), 0 when it does.
export function fragmentedShare(n, shape) {
  if (!schedulable(n) || fits(n, shape)) return 0;
  let sum = 0, dims = 0;
  for (const d of DIMS) {
    const c = capacityOf(n, d);
    if (c > 0) { sum += freeOf(n, d) / c; dims++; }
  }
  return dims ? sum / dims : 0;
}

// summarize totals the cell: capacity, allocated and used per dimension,
// nodes by status, and fragmentation for shape: per dimension, the share
// of the free capacity of schedulable nodes that sits on nodes where shape
// does not fit (the FGD paper's idea with one task type, docs/ui.md).
export function summarize(nodes, shape) {
  const sum = {}, byStatus = {};
  for (const d of DIMS) sum[d] = { capacity: 0, allocated: 0, used: 0, hasUsage: false, free: 0, stranded: 0 };
  let fitting = 0;
  for (const n of nodes) {
    const st = statusOf(n);
    byStatus[st] = (byStatus[st] || 0) + 1;
    const ok = schedulable(n), fit = ok && fits(n, shape);
    if (fit) fitting++;
    for (const d of DIMS) {
      const s = sum[d];
      s.capacity += capacityOf(n, d);
      s.allocated += allocatedOf(n, d);
      const u = usageOf(n, d);
      if (u !== null) { s.used += u; s.hasUsage = true; }
      if (ok) {
        const f = freeOf(n, d);
        s.free += f;
        if (!fit) s.stranded += f;
      }
    }
  }
  for (const d of DIMS) sum[d].fragmentation = sum[d].free > 0 ? sum[d].stranded / sum[d].free : 0;
  return { dims: sum, byStatus, nodes: nodes.length, fitting, copies: copiesThatFit(nodes, shape) };
}

// Reference shapes for fragmentation: what kind of task the free capacity
// is judged for.
export const SHAPES = {
  small: { label: '0.5 CPU, 1 GiB', r: { cpuMilli: 500, memoryBytes: 1 << 30 } },
  medium: { label: '2 CPU, 8 GiB', r: { cpuMilli: 2000, memoryBytes: 8 * (1 << 30) } },
  large: { label: '8 CPU, 32 GiB', r: { cpuMilli: 8000, memoryBytes: 32 * (1 << 30) } },
  gpu: { label: '1 GPU, 8 CPU, 32 GiB', r: { gpus: 1, cpuMilli: 8000, memoryBytes: 32 * (1 << 30) } },
};

// groupRequest is one copy of a task group: the sum of its tasks'
// resources, as the scheduler asks for it.
export function groupRequest(group) {
  const r = { cpuMilli: 0, memoryBytes: 0, gpus: 0, gpuMilli: 0 };
  for (const t of group?.tasks || []) {
    r.cpuMilli += t.resources?.cpuMilli || 0;
    r.memoryBytes += t.resources?.memoryBytes || 0;
    r.gpus += t.resources?.gpus || 0;
    r.gpuMilli += t.resources?.gpuMilli || 0;
  }
  return r;
}

// reshape says what change to a request would let missing more copies
// fit, judged on the schedulable nodes' free capacity by the aggregate
// dimensions: for each dimension the request asks for, the largest amount
// that would fit `missing` copies with the others unchanged, and how many
// copies fit as asked. It is an estimate for the operator, not the
// scheduler's verdict: constraints, cores and ports are the plan's to
// check (the Run view plans the changed spec).
export function reshape(nodes, request, missing) {
  const asked = copiesThatFit(nodes, request);
  const out = { fitNow: asked, missing, changes: [] };
  for (const d of ['cpu', 'memory']) {
    const want = amount(request, d);
    if (want <= 0) continue;
    // The largest amount of d at which `missing` copies fit: binary
    // search over the amount, the other dimensions as asked.
    let lo = 0, hi = want;
    const at = (v) => copiesThatFit(nodes, withAmount(request, d, v));
    if (at(want) >= missing) continue;
    if (at(1) < missing) { out.changes.push({ dim: d, fits: false }); continue; }
    for (let k = 0; k < 40 && hi - lo > 1; k++) {
      const mid = Math.floor((lo + hi) / 2);
      if (at(mid) >= missing) lo = mid; else hi = mid;
    }
    out.changes.push({ dim: d, fits: true, amount: lo, from: want });
  }
  // Fewer copies: how many fit as asked.
  if (asked < missing) out.changes.push({ dim: 'replicas', fits: asked > 0, amount: asked, from: missing });
  return out;
}

function withAmount(r, dim, v) {
  const c = { ...r };
  if (dim === 'cpu') c.cpuMilli = v; else if (dim === 'memory') c.memoryBytes = v;
  return c;
}
