package httpapi

import (
	"fmt"
	"testing"
	"time"

	"github.com/strata-dev/strata/api"
)

// TestRefusalsAggregate: alike unproven refusals of a window become one
// entry with their count and time span; past refusalKeys distinct
// entries, the rest is one entry that counts them; take starts a new
// window; no refusal goes uncounted.
func TestRefusalsAggregate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	refusal := func(from, path string, i int) *api.AuditEntry {
		return &api.AuditEntry{Time: t0.Add(time.Duration(i) * time.Millisecond), Who: "anonymous", From: from, Method: "POST", Path: path, Status: 403, Result: "acl-no-token"}
	}
	tests := []struct {
		name    string
		sends   func(r *refusals)
		entries int
		counts  []int // of each entry, 0 for a single request
	}{
		{"one request is an ordinary entry", func(r *refusals) { r.add(refusal("a", "/x", 0)) }, 1, []int{0}},
		{"alike requests are one entry", func(r *refusals) {
			for i := range 500 {
				r.add(refusal("a", "/x", i))
			}
		}, 1, []int{500}},
		{"sources and paths apart", func(r *refusals) {
			for i := range 10 {
				r.add(refusal(fmt.Sprint("a", i%2), fmt.Sprint("/x", i%3), i))
			}
		}, 6, nil},
		{"past the window's entries, one counts the rest", func(r *refusals) {
			for i := range 1000 {
				r.add(refusal("a", fmt.Sprint("/x/", i), i))
			}
		}, refusalKeys + 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r refusals
			tt.sends(&r)
			got := r.take()
			if len(got) != tt.entries {
				t.Fatalf("%d entries, want %d", len(got), tt.entries)
			}
			for i, c := range tt.counts {
				if got[i].Count != c {
					t.Errorf("entry %d counts %d, want %d", i, got[i].Count, c)
				}
			}
			for _, e := range got {
				if !e.Unproven {
					t.Errorf("entry %+v not marked unproven", e)
				}
				if e.Count > 1 && !e.Until.After(e.Time) {
					t.Errorf("entry %+v: until not after its first time", e)
				}
			}
			if again := r.take(); len(again) != 0 {
				t.Errorf("a new window holds %d entries", len(again))
			}
		})
	}
}
