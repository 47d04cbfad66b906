package state

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/strata-dev/strata/api"
)

// A dump's JSON lists each group spec once ("groups") and has every
// allocation name its spec by position ("groupRef", 1-based) instead of
// embedding it, as the store shares one spec among all of a group's
// allocations (groups.go). Dumps written before that embed the spec in
// each allocation ("taskGroup"), and still decode.

// dumpAlloc is an allocation as a dump's JSON holds it.
type dumpAlloc struct {
	*api.Allocation
	GroupRef int `json:"groupRef,omitempty"`
}

// Encode writes the dump as JSON to w, one allocation at a time, so a
// snapshot of a large cell never holds its whole encoding in memory.
func (d *Dump) Encode(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	field := func(name string, v any, first bool) error {
		if !first {
			bw.WriteByte(',')
		}
		fmt.Fprintf(bw, "%q:", name)
		return enc.Encode(v)
	}
	bw.WriteByte('{')
	refs := map[*api.TaskGroup]int{}
	var groups []*api.TaskGroup
	for _, a := range d.Allocs {
		if a.TaskGroup != nil && refs[a.TaskGroup] == 0 {
			groups = append(groups, a.TaskGroup)
			refs[a.TaskGroup] = len(groups)
		}
	}
	for i, f := range []struct {
		name string
		v    any
	}{{"index", d.Index}, {"workloads", d.Workloads}, {"nodes", d.Nodes}, {"groups", groups}} {
		if err := field(f.name, f.v, i == 0); err != nil {
			return fmt.Errorf("encode dump %s: %w", f.name, err)
		}
	}
	bw.WriteString(`,"allocs":[`)
	for i, a := range d.Allocs {
		if i > 0 {
			bw.WriteByte(',')
		}
		c := *a
		c.TaskGroup = nil
		if err := enc.Encode(dumpAlloc{Allocation: &c, GroupRef: refs[a.TaskGroup]}); err != nil {
			return fmt.Errorf("encode dump allocation %s: %w", a.ID, err)
		}
	}
	bw.WriteByte(']')
	rest := []struct {
		name string
		v    any
	}{{"evals", d.Evals}, {"events", d.Events}, {"indexes", d.Indexes}}
	for _, f := range []struct {
		name  string
		v     any
		empty bool
	}{
		{"nodeKeys", d.NodeKeys, len(d.NodeKeys) == 0}, {"cellSecrets", d.CellSecrets, len(d.CellSecrets) == 0},
		{"aclPolicies", d.ACLPolicies, len(d.ACLPolicies) == 0}, {"aclTokens", d.ACLTokens, len(d.ACLTokens) == 0},
		{"audit", d.Audit, len(d.Audit) == 0},
	} {
		if !f.empty {
			rest = append(rest, struct {
				name string
				v    any
			}{f.name, f.v})
		}
	}
	if d.Config != nil {
		rest = append(rest, struct {
			name string
			v    any
		}{"config", d.Config})
	}
	if d.CellID != "" {
		rest = append(rest, struct {
			name string
			v    any
		}{"cellId", d.CellID})
	}
	for _, f := range rest {
		if err := field(f.name, f.v, false); err != nil {
			return fmt.Errorf("encode dump %s: %w", f.name, err)
		}
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// MarshalJSON is Encode into memory.
func (d *Dump) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	if err := d.Encode(&buf); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON reads a dump in either form (group specs listed once, or
// embedded in every allocation).
func (d *Dump) UnmarshalJSON(data []byte) error {
	var wire struct {
		Index     uint64            `json:"index"`
		Workloads []*api.Workload   `json:"workloads"`
		Nodes     []*api.Node       `json:"nodes"`
		Groups    []*api.TaskGroup  `json:"groups"`
		Allocs    []dumpAlloc       `json:"allocs"`
		Evals     []*api.Evaluation `json:"evals"`
		Events    []*api.Event      `json:"events"`
		Config    *api.CellConfig   `json:"config"`
		CellID    string            `json:"cellId"`
		Indexes   map[string]uint64 `json:"indexes"`

		NodeKeys    []*NodeKey        `json:"nodeKeys"`
		CellSecrets []*CellSecret     `json:"cellSecrets"`
		ACLPolicies []*api.ACLPolicy  `json:"aclPolicies"`
		ACLTokens   []*ACLToken       `json:"aclTokens"`
		Audit       []*api.AuditEntry `json:"audit"`
	}
	if err := json.Unmarshal(data, &wire); err != nil {
		return err
	}
	*d = Dump{Index: wire.Index, Workloads: wire.Workloads, Nodes: wire.Nodes, Evals: wire.Evals,
		Events: wire.Events, Config: wire.Config, CellID: wire.CellID, Indexes: wire.Indexes,
		NodeKeys: wire.NodeKeys, CellSecrets: wire.CellSecrets, ACLPolicies: wire.ACLPolicies, ACLTokens: wire.ACLTokens, Audit: wire.Audit}
	d.Allocs = make([]*api.Allocation, 0, len(wire.Allocs))
	for _, da := range wire.Allocs {
		if da.Allocation == nil {
			return fmt.Errorf("dump: an allocation is null")
		}
		if da.GroupRef > 0 {
			if da.GroupRef > len(wire.Groups) {
				return fmt.Errorf("dump: allocation %s names group %d of %d", da.ID, da.GroupRef, len(wire.Groups))
			}
			da.TaskGroup = wire.Groups[da.GroupRef-1]
		}
		d.Allocs = append(d.Allocs, da.Allocation)
	}
	return nil
}
