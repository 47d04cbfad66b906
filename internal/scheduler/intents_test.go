package scheduler

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestIntentListIsItsExpansion: whatever placements a group needs, in
// whatever mix of fresh runs and replacements, the run-length list holds
// the same sequence as the list of one intent each, and so does every
// suffix (the gang search places the rest of a group from its k-th
// intent).
func TestIntentListIsItsExpansion(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var list intentList
		var want []placeIntent
		next := 0
		for range rapid.IntRange(0, 20).Draw(t, "steps") {
			next += rapid.IntRange(0, 3).Draw(t, "gap")
			if rapid.Bool().Draw(t, "fresh") {
				n := rapid.IntRange(0, 5).Draw(t, "n")
				list.addFresh(next, n)
				for i := range n {
					want = append(want, placeIntent{index: next + i})
				}
				next += n
				continue
			}
			p := placeIntent{index: next}
			if rapid.Bool().Draw(t, "replaces") {
				p.previous = fmt.Sprint("a", next)
			}
			list.add(p)
			want = append(want, p)
			next++
		}
		expand := func(l intentList) []placeIntent {
			var out []placeIntent
			for k, p := range l.all() {
				if k != len(out) {
					t.Fatalf("position %d yielded as %d", len(out), k)
				}
				out = append(out, p)
			}
			return out
		}
		if l := list.len(); l != len(want) {
			t.Fatalf("len %d, want %d", l, len(want))
		}
		for k := 0; k <= len(want)+1; k++ {
			got, w := expand(list.from(k)), want[min(k, len(want)):]
			if fmt.Sprint(got) != fmt.Sprint(w) || list.from(k).len() != len(w) {
				t.Fatalf("from(%d) = %v (len %d), want %v", k, got, list.from(k).len(), w)
			}
		}
	})
}
