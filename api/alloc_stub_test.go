package api

import (
	"encoding/json"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestAllocationTableRoundTrip: whatever the stubs hold (any strings,
// quotes, control characters, the whole range of numbers), the table
// decodes to the same stubs, and it is valid JSON.
func TestAllocationTableRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		str := rapid.SampledFrom([]string{"", "default", "web", `a"b`, `back\slash`, "tab\there", "nl\n", "ünï", "\x01", "node-00001"})
		stubs := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) AllocationStub {
			return AllocationStub{ID: rapid.String().Draw(t, "id"), Namespace: str.Draw(t, "ns"), Workload: str.Draw(t, "wl"),
				Group: str.Draw(t, "group"), Index: rapid.IntRange(0, 1<<30).Draw(t, "index"), NodeID: str.Draw(t, "node"),
				NodeName: str.Draw(t, "nodeName"), WorkloadVersion: rapid.Uint64Range(0, 1<<62).Draw(t, "version"),
				DesiredStatus: str.Draw(t, "desired"), ClientStatus: str.Draw(t, "client"), Health: str.Draw(t, "health"),
				Restarts: rapid.IntRange(0, 1<<20).Draw(t, "restarts"), CPUMilli: rapid.Int64().Draw(t, "cpu"),
				MemoryBytes: rapid.Int64().Draw(t, "mem"), CreateTime: time.UnixMilli(rapid.Int64Range(0, 1<<45).Draw(t, "ms")).UTC(),
				ModifyIndex: rapid.Uint64Range(0, 1<<62).Draw(t, "modify")}
		}), 0, 20).Draw(t, "stubs")
		b, err := json.Marshal(AllocationTable{Stubs: stubs})
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Fatalf("not JSON: %s", b)
		}
		var back AllocationTable
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("decode %s: %v", b, err)
		}
		if len(back.Stubs) != len(stubs) {
			t.Fatalf("%d stubs back, want %d", len(back.Stubs), len(stubs))
		}
		for i := range stubs {
			if back.Stubs[i] != stubs[i] {
				t.Fatalf("stub %d: got %+v, want %+v", i, back.Stubs[i], stubs[i])
			}
		}
	})
}
