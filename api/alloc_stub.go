package api

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// AllocationStub is an allocation's line in a long list: what a list shows
// and filters on, without the group spec, task states and assignment a
// full Allocation carries.
type AllocationStub struct {
	ID              string    `json:"id"`
	Namespace       string    `json:"namespace"`
	Workload        string    `json:"workload"`
	Group           string    `json:"group"`
	Index           int       `json:"index"`
	NodeID          string    `json:"nodeId"`
	NodeName        string    `json:"nodeName,omitempty"`
	WorkloadVersion uint64    `json:"workloadVersion"`
	DesiredStatus   string    `json:"desiredStatus"`
	ClientStatus    string    `json:"clientStatus"`
	Health          string    `json:"health,omitempty"` // AllocHealth.Status, "" before the first report
	Restarts        int       `json:"restarts,omitempty"`
	CPUMilli        int64     `json:"cpuMilli,omitempty"`
	MemoryBytes     int64     `json:"memoryBytes,omitempty"`
	CreateTime      time.Time `json:"createTime"`
	ModifyIndex     uint64    `json:"modifyIndex"`
}

// Stub returns a's line in a long list.
func (a *Allocation) Stub() AllocationStub {
	s := AllocationStub{ID: a.ID, Namespace: a.Namespace, Workload: a.Workload, Group: a.Group, Index: a.Index,
		NodeID: a.NodeID, NodeName: a.NodeName, WorkloadVersion: a.WorkloadVersion,
		DesiredStatus: a.DesiredStatus, ClientStatus: a.ClientStatus,
		CPUMilli: a.Resources.CPUMilli, MemoryBytes: a.Resources.MemoryBytes,
		CreateTime: a.CreateTime, ModifyIndex: a.ModifyIndex}
	if a.Health != nil {
		s.Health = a.Health.Status
	}
	for _, ts := range a.TaskStates {
		if ts != nil {
			s.Restarts += ts.Restarts
		}
	}
	return s
}

// AllocationTable is a long list of stubs in columns (GET
// /v1/allocations?stub=true, the web UI's allocation list): each row an
// array in the order of TableColumns, its repeated strings (namespace,
// workload, group, node, statuses) indices into Strings, and CreateTime in
// Unix milliseconds. 100,000 allocations are about 10 MB this way against
// 43 MB as indented objects, and encode and parse several times faster
// (docs/ui.md).
type AllocationTable struct {
	Stubs []AllocationStub
}

// TableColumns name the columns of an AllocationTable's rows.
var TableColumns = []string{"id", "namespace", "workload", "group", "index", "nodeId", "nodeName", "workloadVersion",
	"desiredStatus", "clientStatus", "health", "restarts", "cpuMilli", "memoryBytes", "createTime", "modifyIndex"}

// CompactJSON marks the table as written without indentation: it is
// machine-read, and indentation would triple it.
func (AllocationTable) CompactJSON() {}

// MarshalJSON writes {"columns": [...], "strings": [...], "rows": [[...]]}.
func (t AllocationTable) MarshalJSON() ([]byte, error) {
	index := map[string]int{}
	var strs []string
	intern := func(s string) int {
		i, ok := index[s]
		if !ok {
			i = len(strs)
			index[s] = i
			strs = append(strs, s)
		}
		return i
	}
	rows := make([]byte, 0, 100*len(t.Stubs)+16)
	rows = append(rows, '[')
	for k, s := range t.Stubs {
		if k > 0 {
			rows = append(rows, ',')
		}
		rows = append(rows, '[')
		rows = appendJSONString(rows, s.ID)
		for _, v := range []string{s.Namespace, s.Workload, s.Group} {
			rows = append(rows, ',')
			rows = strconv.AppendInt(rows, int64(intern(v)), 10)
		}
		rows = append(rows, ',')
		rows = strconv.AppendInt(rows, int64(s.Index), 10)
		for _, v := range []string{s.NodeID, s.NodeName} {
			rows = append(rows, ',')
			rows = strconv.AppendInt(rows, int64(intern(v)), 10)
		}
		rows = append(rows, ',')
		rows = strconv.AppendUint(rows, s.WorkloadVersion, 10)
		for _, v := range []string{s.DesiredStatus, s.ClientStatus, s.Health} {
			rows = append(rows, ',')
			rows = strconv.AppendInt(rows, int64(intern(v)), 10)
		}
		for _, v := range []int64{int64(s.Restarts), s.CPUMilli, s.MemoryBytes, s.CreateTime.UnixMilli()} {
			rows = append(rows, ',')
			rows = strconv.AppendInt(rows, v, 10)
		}
		rows = append(rows, ',')
		rows = strconv.AppendUint(rows, s.ModifyIndex, 10)
		rows = append(rows, ']')
	}
	rows = append(rows, ']')
	out := make([]byte, 0, len(rows)+64*len(strs)+256)
	out = append(out, `{"columns":`...)
	cols, _ := json.Marshal(TableColumns)
	out = append(out, cols...)
	out = append(out, `,"strings":[`...)
	for i, s := range strs {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendJSONString(out, s)
	}
	out = append(out, `],"rows":`...)
	out = append(out, rows...)
	return append(out, '}'), nil
}

// UnmarshalJSON reads what MarshalJSON wrote (Go clients and tests).
func (t *AllocationTable) UnmarshalJSON(b []byte) error {
	var raw struct {
		Columns []string            `json:"columns"`
		Strings []string            `json:"strings"`
		Rows    [][]json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if len(raw.Columns) != len(TableColumns) {
		return fmt.Errorf("allocation table: %d columns, want %d", len(raw.Columns), len(TableColumns))
	}
	str := func(m json.RawMessage) (string, error) {
		var i int
		if err := json.Unmarshal(m, &i); err != nil || i < 0 || i >= len(raw.Strings) {
			return "", fmt.Errorf("allocation table: bad string index %s", m)
		}
		return raw.Strings[i], nil
	}
	num := func(m json.RawMessage) (int64, error) { return strconv.ParseInt(string(m), 10, 64) }
	t.Stubs = make([]AllocationStub, 0, len(raw.Rows))
	for _, r := range raw.Rows {
		if len(r) != len(TableColumns) {
			return fmt.Errorf("allocation table: a row of %d values, want %d", len(r), len(TableColumns))
		}
		var s AllocationStub
		var err error
		var n [16]int64
		if err = json.Unmarshal(r[0], &s.ID); err != nil {
			return err
		}
		for _, c := range []struct {
			col int
			to  *string
		}{{1, &s.Namespace}, {2, &s.Workload}, {3, &s.Group}, {5, &s.NodeID}, {6, &s.NodeName}, {8, &s.DesiredStatus}, {9, &s.ClientStatus}, {10, &s.Health}} {
			if *c.to, err = str(r[c.col]); err != nil {
				return err
			}
		}
		for _, col := range []int{4, 7, 11, 12, 13, 14, 15} {
			if n[col], err = num(r[col]); err != nil {
				return fmt.Errorf("allocation table: column %s: %w", TableColumns[col], err)
			}
		}
		s.Index, s.WorkloadVersion, s.Restarts = int(n[4]), uint64(n[7]), int(n[11])
		s.CPUMilli, s.MemoryBytes, s.CreateTime, s.ModifyIndex = n[12], n[13], time.UnixMilli(n[14]).UTC(), uint64(n[15])
		t.Stubs = append(t.Stubs, s)
	}
	return nil
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
