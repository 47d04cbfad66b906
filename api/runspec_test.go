package api

import (
	"testing"
	"time"
)

// TestSameRun: what changes a replica's run and what does not.
func TestSameRun(t *testing.T) {
	base := func() *TaskGroup {
		return &TaskGroup{Name: "g", Replicas: 3, Tasks: []*Task{{Name: "t", Driver: "mock", Command: []string{"x"}}}}
	}
	for _, tc := range []struct {
		name   string
		change func(g *TaskGroup)
		same   bool
	}{
		{"nothing", func(*TaskGroup) {}, true},
		{"replicas", func(g *TaskGroup) { g.Replicas = 9 }, true},
		{"update policy", func(g *TaskGroup) { g.Update = &UpdatePolicy{MaxParallel: 2} }, true},
		{"disruption budget", func(g *TaskGroup) { g.Disruption = &DisruptionPolicy{MaxUnavailable: 1} }, true},
		{"shutdown delay", func(g *TaskGroup) { g.ShutdownDelay = time.Second }, true},
		{"command", func(g *TaskGroup) { g.Tasks = []*Task{{Name: "t", Driver: "mock", Command: []string{"y"}}} }, false},
		{"a task more", func(g *TaskGroup) { g.Tasks = append(g.Tasks, &Task{Name: "u"}) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cur := base()
			tc.change(cur)
			if got := SameRun(base(), cur); got != tc.same {
				t.Fatalf("SameRun %v, want %v", got, tc.same)
			}
		})
	}
	if SameRun(nil, base()) || SameRun(base(), nil) {
		t.Fatal("a missing spec runs the same as a spec")
	}
}
