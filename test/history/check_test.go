package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hist builds histories with times in abstract ticks.
type hist struct{ ops []Op }

func (h *hist) add(proc int, call, ret int64, in Input, out Output) *hist {
	h.ops = append(h.ops, Op{Process: proc, Input: in, Output: out, Call: call, Return: ret})
	return h
}

func (h *hist) put(proc int, call, ret int64, key, value string, version uint64) *hist {
	return h.add(proc, call, ret, Input{Kind: Put, Key: key, Value: value}, Output{Found: true, Version: version})
}

func (h *hist) putUnknown(proc int, call int64, key, value string) *hist {
	return h.add(proc, call, Never, Input{Kind: Put, Key: key, Value: value}, Output{Unknown: true})
}

func (h *hist) get(proc int, call, ret int64, key, value string, version uint64) *hist {
	return h.add(proc, call, ret, Input{Kind: Get, Key: key}, Output{Found: true, Value: value, Version: version})
}

func (h *hist) getStopped(proc int, call, ret int64, key, value string, version uint64) *hist {
	return h.add(proc, call, ret, Input{Kind: Get, Key: key}, Output{Found: true, Value: value, Version: version, Stopped: true})
}

func (h *hist) getMissing(proc int, call, ret int64, key string) *hist {
	return h.add(proc, call, ret, Input{Kind: Get, Key: key}, Output{})
}

func (h *hist) write(proc int, call, ret int64, kind Kind, key string, found bool) *hist {
	out := Output{Found: found}
	if ret == Never {
		out = Output{Unknown: true}
	}
	return h.add(proc, call, ret, Input{Kind: kind, Key: key}, out)
}

func (h *hist) allocs(proc int, call, ret int64, key string, found bool, values ...string) *hist {
	return h.add(proc, call, ret, Input{Kind: Allocs, Key: key}, Output{Found: found, Values: values})
}

func (h *hist) history() History { return History{Ops: h.ops} }

func TestCheck(t *testing.T) {
	tests := []struct {
		name      string
		h         *hist
		illegal   []string // keys
		lost      int
		stuckText string // in the error, when illegal
	}{
		{name: "sequential create update get",
			h: new(hist).put(0, 1, 2, "a", "x", 1).get(0, 3, 4, "a", "x", 1).put(0, 5, 6, "a", "y", 2).get(1, 7, 8, "a", "y", 2)},
		{name: "a read after an acknowledged create sees it",
			h:       new(hist).put(0, 1, 2, "a", "x", 1).getMissing(1, 3, 4, "a"),
			illegal: []string{"a"}, lost: 1, stuckText: "get(a) → 404"},
		{name: "a stale read after an update",
			h:       new(hist).put(0, 1, 2, "a", "x", 1).put(0, 3, 4, "a", "y", 2).get(1, 5, 6, "a", "x", 1),
			illegal: []string{"a"}, lost: 1, stuckText: "get(a) → x v1"},
		{name: "a concurrent read may see either",
			h: new(hist).put(0, 1, 2, "a", "x", 1).put(0, 3, 6, "a", "y", 2).get(1, 4, 5, "a", "x", 1).get(2, 4, 5, "a", "y", 2)},
		{name: "but not go back once the new value was read",
			h:       new(hist).put(0, 1, 2, "a", "x", 1).put(0, 3, 9, "a", "y", 2).get(1, 4, 5, "a", "y", 2).get(2, 6, 7, "a", "x", 1),
			illegal: []string{"a"}},
		{name: "an indeterminate create may have happened",
			h: new(hist).putUnknown(0, 1, "a", "x").get(1, 5, 6, "a", "x", 1)},
		{name: "or not",
			h: new(hist).putUnknown(0, 1, "a", "x").getMissing(1, 5, 6, "a")},
		{name: "an indeterminate create explains a version gap",
			h: new(hist).put(0, 1, 2, "a", "x", 1).putUnknown(1, 3, "a", "y").put(2, 4, 5, "a", "z", 3)},
		{name: "a version the model did not reach",
			h:       new(hist).put(0, 1, 2, "a", "x", 2),
			illegal: []string{"a"}, stuckText: "put(a, x) → v2"},
		{name: "two deletes cannot both remove one workload",
			h:       new(hist).put(0, 1, 2, "a", "x", 1).write(1, 3, 6, Delete, "a", true).write(2, 4, 5, Delete, "a", true),
			illegal: []string{"a"}},
		{name: "a delete then a 404",
			h: new(hist).put(0, 1, 2, "a", "x", 1).write(1, 3, 4, Delete, "a", true).write(2, 5, 6, Delete, "a", false).getMissing(0, 7, 8, "a")},
		{name: "an indeterminate delete may or may not have happened",
			h: new(hist).put(0, 1, 2, "a", "x", 1).write(1, 3, Never, Delete, "a", false).get(2, 5, 6, "a", "x", 1).getMissing(2, 7, 8, "a")},
		{name: "a delete resets the version",
			h: new(hist).put(0, 1, 2, "a", "x", 1).write(0, 3, 4, Delete, "a", true).put(0, 5, 6, "a", "y", 1)},
		{name: "stop keeps the version, put clears the stop",
			h: new(hist).put(0, 1, 2, "a", "x", 1).write(0, 3, 4, Stop, "a", true).getStopped(1, 5, 6, "a", "x", 1).
				put(0, 7, 8, "a", "y", 2).get(1, 9, 10, "a", "y", 2)},
		{name: "a stop of a missing workload is a 404",
			h:       new(hist).write(0, 1, 2, Stop, "a", true),
			illegal: []string{"a"}},
		{name: "allocations run specs that were written",
			h: new(hist).put(0, 1, 2, "a", "x", 1).allocs(1, 3, 4, "a", true, "x").put(0, 5, 6, "a", "y", 2).allocs(1, 7, 8, "a", true, "x", "y")},
		{name: "an allocation of a spec not written yet",
			h:       new(hist).put(0, 1, 2, "a", "x", 1).allocs(1, 3, 4, "a", true, "y").put(0, 5, 6, "a", "y", 2),
			illegal: []string{"a"}},
		{name: "allocations outlive a delete",
			h: new(hist).put(0, 1, 2, "a", "x", 1).write(0, 3, 4, Delete, "a", true).allocs(1, 5, 6, "a", true, "x").allocs(1, 7, 8, "b", false)},
		{name: "no allocations and no workload is a 404, not an empty list",
			h:       new(hist).allocs(0, 1, 2, "a", true),
			illegal: []string{"a"}},
		{name: "workloads are independent",
			h:       new(hist).put(0, 1, 2, "a", "x", 1).put(1, 1, 2, "b", "y", 1).getMissing(0, 3, 4, "b").get(1, 3, 4, "a", "x", 1),
			illegal: []string{"b"}, lost: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			r, err := Check(tt.h.history(), Options{ArtifactDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			var illegal []string
			for _, v := range r.Illegal {
				illegal = append(illegal, v.Key)
			}
			if strings.Join(illegal, ",") != strings.Join(tt.illegal, ",") {
				t.Fatalf("illegal workloads = %v, want %v\n%v", illegal, tt.illegal, r.Err())
			}
			if len(r.Lost) != tt.lost {
				t.Fatalf("lost writes = %d, want %d: %v", len(r.Lost), tt.lost, r.Err())
			}
			if (len(tt.illegal) == 0 && tt.lost == 0) != (r.Err() == nil) {
				t.Fatalf("Err() = %v", r.Err())
			}
			if tt.stuckText != "" && !strings.Contains(r.Err().Error(), tt.stuckText) {
				t.Fatalf("the error does not name the stuck operation %q:\n%v", tt.stuckText, r.Err())
			}
		})
	}
}

// TestFailedCheckLeavesArtifacts: a violation leaves porcupine's
// visualization and the history, which loads back to the same verdict.
func TestFailedCheckLeavesArtifacts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "artifacts")
	h := new(hist).put(0, 1, 2, "wl/1", "x", 1).getMissing(1, 3, 4, "wl/1").history()
	r, err := Check(h, Options{ArtifactDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if r.Err() == nil || r.Artifacts != dir {
		t.Fatalf("want a failure with artifacts in %s, got %v (%s)", dir, r.Err(), r.Artifacts)
	}
	html := r.Illegal[0].Visualization
	if b, err := os.ReadFile(html); err != nil || !strings.Contains(string(b), "<html") {
		t.Fatalf("visualization %s: %v", html, err)
	}
	if !strings.Contains(r.Err().Error(), html) || !strings.Contains(r.Err().Error(), "history.json") {
		t.Fatalf("the error does not name the artifacts:\n%v", r.Err())
	}
	back, err := Load(filepath.Join(dir, "history.json"))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Check(back, Options{ArtifactDir: t.TempDir()})
	if err != nil || len(r2.Illegal) != 1 {
		t.Fatalf("reloaded history: %v %v", err, r2.Err())
	}
}

// TestRecorderIndeterminate: an indeterminate write never returns and its
// worker continues as a new process; an indeterminate read is dropped.
func TestRecorderIndeterminate(t *testing.T) {
	r := NewRecorder()
	r.Invoke(0, "s1", Input{Kind: Put, Key: "a", Value: "x"}).Indeterminate(os.ErrDeadlineExceeded)
	r.Invoke(0, "s1", Input{Kind: Get, Key: "a"}).Indeterminate(os.ErrDeadlineExceeded)
	r.Invoke(0, "s2", Input{Kind: Get, Key: "a"}).Return(Output{Found: true, Value: "x", Version: 1})
	r.Invoke(1, "s2", Input{Kind: Delete, Key: "a"}).Discard()
	h := r.History()
	if len(h.Ops) != 2 {
		t.Fatalf("want 2 ops (the indeterminate get and the discarded delete dropped), got %v", h.Ops)
	}
	if h.Ops[0].Return != Never || !h.Ops[0].Output.Unknown || h.Ops[0].Note.Err == "" {
		t.Fatalf("indeterminate put recorded as %+v", h.Ops[0])
	}
	if h.Ops[0].Process == h.Ops[1].Process {
		t.Fatalf("the worker kept its process after an indeterminate operation: %v", h.Ops)
	}
	if rep, err := Check(h, Options{}); err != nil || rep.Err() != nil {
		t.Fatalf("check: %v %v", err, rep.Err())
	}
}
