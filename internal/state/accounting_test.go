package state

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/api"
)

// Issue 7, defect 3: an allocation asking for -2 millicores lowered its
// node's allocated CPU, and sums past int64 wrapped. The store refuses
// both and writes nothing.
func TestAccountingRefusesNegativeAndOverflow(t *testing.T) {
	s := New()
	mustWrite(t, s, 1, func(w *WriteTxn) error { return w.UpsertNode(node("n1", 4000)) })
	mustWrite(t, s, 2, func(w *WriteTxn) error { return w.UpsertAlloc(alloc("full", "n1", 4000)) })

	negative := alloc("neg", "n1", -2)
	if err := s.Write(3, func(w *WriteTxn) error { return w.UpsertAlloc(negative) }); !errors.Is(err, ErrNegativeResources) {
		t.Fatalf("negative allocation: err %v, want ErrNegativeResources", err)
	}
	huge := alloc("huge", "n1", math.MaxInt64)
	if err := s.Write(4, func(w *WriteTxn) error { return w.UpsertAlloc(huge) }); !errors.Is(err, ErrAccountingOverflow) {
		t.Fatalf("overflowing allocation: err %v, want ErrAccountingOverflow", err)
	}
	snap := s.Snapshot()
	if got := snap.Node("n1").Allocated.CPUMilli; got != 4000 {
		t.Fatalf("allocated cpu %d after refused writes, want 4000", got)
	}
	if snap.Alloc("neg") != nil || snap.Alloc("huge") != nil || snap.Index() != 2 {
		t.Fatalf("a refused write left something behind (index %d)", snap.Index())
	}
}

// extremeCPU draws allocation sizes from the ordinary range and from the
// edges of int64, where sums wrap.
func extremeCPU() *rapid.Generator[int64] {
	return rapid.OneOf(
		rapid.Int64Range(1, 4000),
		rapid.SampledFrom([]int64{math.MaxInt64, math.MaxInt64 / 2, math.MaxInt64/2 + 1, math.MaxInt64 - 1, -1, -2, math.MinInt64}),
	)
}

// TestAllocatedEqualsSumAtExtremes is TestAllocatedEqualsSum with sizes at
// int64's edges: every write either keeps Allocated equal to the exact sum
// of the node's live allocations or is refused whole, and Allocated is
// never negative.
func TestAllocatedEqualsSumAtExtremes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := New()
		nodes := []string{"n1", "n2"}
		index := uint64(1)
		for _, n := range nodes {
			mustWrite(t, s, index, func(w *WriteTxn) error { return w.UpsertNode(node(n, math.MaxInt64)) })
			index++
		}
		var ids []string
		for step := range rapid.IntRange(1, 40).Draw(t, "steps") {
			index++
			before := s.Snapshot().Index()
			var err error
			switch op := rapid.IntRange(0, 2).Draw(t, "op"); {
			case op == 0 || len(ids) == 0:
				id := fmt.Sprintf("a%d", step)
				a := alloc(id, rapid.SampledFrom(nodes).Draw(t, "node"), extremeCPU().Draw(t, "cpu"))
				if err = s.Write(index, func(w *WriteTxn) error { return w.UpsertAlloc(a) }); err == nil {
					ids = append(ids, id)
				}
			case op == 1:
				id := rapid.SampledFrom(ids).Draw(t, "id")
				status := rapid.SampledFrom([]string{api.AllocRunning, api.AllocComplete, api.AllocFailed}).Draw(t, "status")
				err = s.Write(index, func(w *WriteTxn) error {
					return w.UpdateAllocFromClient(&api.AllocUpdate{ID: id, ClientStatus: status})
				})
			default:
				id := rapid.SampledFrom(ids).Draw(t, "id")
				err = s.Write(index, func(w *WriteTxn) error { return w.StopAlloc(id, "x", rapid.Bool().Draw(t, "lost")) })
			}
			if err != nil {
				if !errors.Is(err, ErrNegativeResources) && !errors.Is(err, ErrAccountingOverflow) {
					t.Fatalf("step %d: unexpected error %v", step, err)
				}
				if got := s.Snapshot().Index(); got != before {
					t.Fatalf("step %d: refused write moved the index %d → %d", step, before, got)
				}
			}
			snap := s.Snapshot()
			for _, n := range nodes {
				want := new(big.Int)
				for _, a := range snap.AllocsByNode(n) {
					if !a.Terminal() {
						want.Add(want, big.NewInt(a.Resources.CPUMilli))
					}
				}
				got := snap.Node(n).Allocated.CPUMilli
				if !want.IsInt64() || got != want.Int64() || got < 0 {
					t.Fatalf("step %d: node %s allocated %d, exact sum of live allocations %s", step, n, got, want)
				}
			}
		}
	})
}
