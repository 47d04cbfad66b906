package scheduler

import (
	"github.com/strata-dev/strata/api"
)

// specCache compares task-group specs by what a replica runs
// (api.RunSpec, the rule the CLI shares). Encodings are memoised per
// pointer because allocations share their spec.
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
	s, ok := api.RunSpec(g)
	if ok {
		c.enc[g] = s
	}
	return s, ok
}

// NeedsReplacement reports whether moving a group from spec old to spec
// cur replaces its allocations (a destructive update) rather than changing
// them in place: anything but what api.RunSpec leaves out (the replica
// count, the update policy, the disruption budget, the shutdown delay).
func NeedsReplacement(old, cur *api.TaskGroup) bool { return !api.SameRun(old, cur) }
