package scheduler

import (
	"encoding/json"

	"github.com/strata-dev/strata/api"
)

// specCache compares task-group specs by a canonical encoding: the group as
// JSON (struct fields in declaration order, map keys sorted) without
// Replicas, Update and Disruption, which change how many run, how a new
// version rolls out and how many the cell may move at once, not what a
// replica runs.
// Encodings are memoised per pointer because allocations share their spec.
type specCache struct{ enc map[*api.TaskGroup]string }

func newSpecCache() *specCache { return &specCache{enc: make(map[*api.TaskGroup]string)} }

// changed reports whether running old instead of cur would run something
// else. A missing or unencodable spec counts as changed.
func (c *specCache) changed(old, cur *api.TaskGroup) bool {
	if old == cur {
		return false
	}
	a, okA := c.encode(old)
	b, okB := c.encode(cur)
	return !okA || !okB || a != b
}

func (c *specCache) encode(g *api.TaskGroup) (string, bool) {
	if g == nil {
		return "", false
	}
	if s, ok := c.enc[g]; ok {
		return s, true
	}
	s, ok := canonicalGroup(g)
	if ok {
		c.enc[g] = s
	}
	return s, ok
}

func canonicalGroup(g *api.TaskGroup) (string, bool) {
	cp := *g
	cp.Replicas = 0
	cp.Update = nil      // how to roll out is not what a replica runs
	cp.Disruption = nil  // nor how many the cell may move at once
	cp.ShutdownDelay = 0 // nor how long a stop waits: the agent reads it when it stops
	b, err := json.Marshal(&cp)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// NeedsReplacement reports whether moving a group from spec old to spec
// cur replaces its allocations (a destructive update) rather than changing
// them in place: anything but the replica count, the update policy and the
// disruption budget.
func NeedsReplacement(old, cur *api.TaskGroup) bool { return newSpecCache().changed(old, cur) }
