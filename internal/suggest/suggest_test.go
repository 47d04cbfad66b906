package suggest

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func TestClosest(t *testing.T) {
	task := []string{"name", "driver", "command", "image", "env", "resources", "restartPolicy", "user"}
	group := []string{"name", "replicas", "tasks", "placement", "update", "disruption"}
	cases := []struct {
		name  string
		got   string
		known []string
		want  string
	}{
		{"one letter missing", "comand", task, "command"},
		{"two letters swapped", "comamnd", task, "command"},
		{"another case", "Command", task, "command"},
		{"Nomad's word", "count", group, "replicas"},
		{"Kubernetes' word", "containers", group, "tasks"},
		{"synonym only where its target is known", "count", task, ""},
		{"snake case synonym", "memory_mb", []string{"cpu", "memory"}, "memory"},
		{"nothing close", "status", group, ""},
		{"short names need a near match", "ab", []string{"env"}, ""},
		{"the known name itself is no suggestion", "name", task, ""},
		{"empty", "", task, ""},
		{"two edits on a long name", "restartPolcy", task, "restartPolicy"},
		{"three edits is too far", "rstrtPolcy", task, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Closest(tc.got, tc.known); got != tc.want {
				t.Fatalf("Closest(%q) = %q, want %q", tc.got, got, tc.want)
			}
		})
	}
}

func TestDidYouMean(t *testing.T) {
	if got := DidYouMean("comand", []string{"command"}); got != ` (did you mean "command"?)` {
		t.Fatalf("got %q", got)
	}
	if got := DidYouMean("Command", []string{"command"}); got != ` (did you mean "command"? names are case-sensitive)` {
		t.Fatalf("got %q", got)
	}
	if got := DidYouMean("zzz", []string{"command"}); got != "" {
		t.Fatalf("got %q", got)
	}
}

func TestDistance(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"comand", "command", 1}, {"ab", "ba", 1}, {"replicas", "repilcas", 1},
	}
	for _, tc := range cases {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := distance(tc.b, tc.a); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d (not symmetric)", tc.b, tc.a, got, tc.want)
		}
	}
}

// TestClosestOnlySuggestsKnownNames: whatever the input, a suggestion is
// one of the known names and never the name given.
func TestClosestOnlySuggestsKnownNames(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		known := rapid.SliceOf(rapid.StringMatching(`[a-zA-Z_-]{0,12}`)).Draw(t, "known")
		got := rapid.StringMatching(`[a-zA-Z_-]{0,12}`).Draw(t, "got")
		s := Closest(got, known)
		if s == "" {
			return
		}
		if s == got || !slices.Contains(known, s) {
			t.Fatalf("Closest(%q, %q) = %q", got, known, s)
		}
	})
}
