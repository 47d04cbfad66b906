package scheduler

import (
	"iter"
	"slices"
)

// Pending replicas are counts (issue 18, defect 2). A group of replicas:
// 1000000 with a few hundred allocations once cost a slot and an intent
// per replica on every evaluation — 180 MB a run, rerun at each capacity
// change. What reconcile learns is now kept only for indices that have
// allocations (slotTable), and the placements a group needs are runs of
// consecutive indices (intentList): a million fresh replicas are one run.
// The placer expands a run one index at a time, only as far as it places,
// so an evaluation's work and memory follow the allocations it reads and
// makes, never the replicas it cannot place.

// placeIntent is one placement a group needs: its replica index and the
// allocation it replaces, if any.
type placeIntent struct {
	index    int
	previous string // PreviousAlloc of the new allocation
}

// intentRun is n placements of consecutive indices from first.index; only
// a run of one may replace an allocation (first.previous).
type intentRun struct {
	first placeIntent
	n     int
}

// intentList is a group's placements in ascending replica index, as runs.
// The zero value is empty.
type intentList struct {
	runs []intentRun
	n    int
}

// intentsOf is the intents of the given placements, in their order.
func intentsOf(ps ...placeIntent) intentList {
	var in intentList
	for _, p := range ps {
		in.add(p)
	}
	return in
}

// add appends one placement; a fresh index right after a run of fresh
// ones extends it.
func (in *intentList) add(p placeIntent) {
	if last := len(in.runs) - 1; last >= 0 && p.previous == "" && in.runs[last].first.previous == "" &&
		in.runs[last].first.index+in.runs[last].n == p.index {
		in.runs[last].n++
	} else {
		in.runs = append(in.runs, intentRun{first: p, n: 1})
	}
	in.n++
}

// addFresh appends n placements of new replicas at indices first,
// first+1, …
func (in *intentList) addFresh(first, n int) {
	if n <= 0 {
		return
	}
	if last := len(in.runs) - 1; last >= 0 && in.runs[last].first.previous == "" && in.runs[last].first.index+in.runs[last].n == first {
		in.runs[last].n += n
	} else {
		in.runs = append(in.runs, intentRun{first: placeIntent{index: first}, n: n})
	}
	in.n += n
}

// len is the number of placements.
func (in intentList) len() int { return in.n }

// from is in without its first k placements.
func (in intentList) from(k int) intentList {
	if k <= 0 {
		return in
	}
	if k >= in.n {
		return intentList{}
	}
	out := intentList{n: in.n - k}
	for i, r := range in.runs {
		if k < r.n {
			rest := intentRun{first: placeIntent{index: r.first.index + k}, n: r.n - k}
			if k == 0 {
				rest = r
			}
			out.runs = append([]intentRun{rest}, in.runs[i+1:]...)
			return out
		}
		k -= r.n
	}
	return intentList{}
}

// all yields each placement with its position, expanding runs as the
// caller goes: a caller that stops early never pays for the rest.
func (in intentList) all() iter.Seq2[int, placeIntent] {
	return func(yield func(int, placeIntent) bool) {
		k := 0
		for _, r := range in.runs {
			for j := range r.n {
				p := r.first
				if j > 0 {
					p = placeIntent{index: r.first.index + j}
				}
				if !yield(k, p) {
					return
				}
				k++
			}
		}
	}
}

// slotTable is what reconcile learned about the indices of one group
// that have allocations; every other index below replicas has none.
type slotTable struct {
	replicas int
	at       map[int]*slot
	indices  []int // of at; ascending when sorted
	sorted   bool
}

func newSlotTable(replicas int) *slotTable {
	return &slotTable{replicas: max(replicas, 0), at: map[int]*slot{}}
}

// get returns the slot of index idx, made empty when it had none.
func (t *slotTable) get(idx int) *slot {
	s := t.at[idx]
	if s == nil {
		s = &slot{}
		t.at[idx] = s
		t.indices, t.sorted = append(t.indices, idx), false
	}
	return s
}

// inOrder yields the indices that have slots, ascending, with their slots.
func (t *slotTable) inOrder() iter.Seq2[int, *slot] {
	if !t.sorted {
		slices.Sort(t.indices)
		t.sorted = true
	}
	return func(yield func(int, *slot) bool) {
		for _, idx := range t.indices {
			if !yield(idx, t.at[idx]) {
				return
			}
		}
	}
}
