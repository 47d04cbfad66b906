// Long lists arrive in columns (api.AllocationTable): rows of values with
// their repeated strings as indices into one table. allocTable turns them
// into the stub objects the views use, sharing the strings.

export function allocTable(t) {
  if (!t || !t.rows) return [];
  const col = Object.fromEntries(t.columns.map((c, i) => [c, i]));
  const s = t.strings;
  const out = new Array(t.rows.length);
  for (let i = 0; i < t.rows.length; i++) {
    const r = t.rows[i];
    out[i] = {
      id: r[col.id], namespace: s[r[col.namespace]], workload: s[r[col.workload]], group: s[r[col.group]],
      index: r[col.index], nodeId: s[r[col.nodeId]], nodeName: s[r[col.nodeName]], workloadVersion: r[col.workloadVersion],
      desiredStatus: s[r[col.desiredStatus]], clientStatus: s[r[col.clientStatus]], health: s[r[col.health]],
      restarts: r[col.restarts], cpuMilli: r[col.cpuMilli], memoryBytes: r[col.memoryBytes],
      created: r[col.createTime], modifyIndex: r[col.modifyIndex],
    };
  }
  return out;
}
