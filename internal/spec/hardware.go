package spec

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/resources"
)

// hugePages reads resources.hugepages: a mapping of page size to the
// bytes of such pages the task may use, e.g. {2Mi: 64Mi, 1Gi: 2Gi}.
func (d *decoder) hugePages(path string, n *yaml.Node, r *api.Resources) {
	d.fields(path, n, nil, func(key, p string, v *yaml.Node) bool {
		size, err := resources.ParseHugePageSize(key)
		if err != nil {
			d.fail(p, v, "%s", err)
			return true
		}
		q, ok := d.quantity(p, v, "64Mi")
		if !ok {
			return true
		}
		amount, err := resources.ParseBytesWithUnit(q.Value)
		if err != nil {
			d.fail(p, q, "%s", err)
			return true
		}
		if problem := resources.CheckHugePages(size, amount); problem != "" {
			d.fail(p, q, "%s", problem)
			return true
		}
		*resources.HugePages(r, size) = amount
		return true
	})
}

// memoryTiers reads resources.memoryTiers: the tiers the task's memory
// may live on, each named once.
func (d *decoder) memoryTiers(path string, n *yaml.Node) []string {
	tiers, ok := d.strings(path, n, false)
	if !ok {
		return nil
	}
	if len(tiers) == 0 {
		d.fail(path, n, "must name at least one tier (%s); leave it out for standard memory only", strings.Join(api.MemoryTiers, ", "))
		return nil
	}
	seen := map[string]bool{}
	for i, t := range tiers {
		switch {
		case !api.AcceptsTier(api.MemoryTiers, t):
			d.fail(index(path, i), n, "unknown memory tier %q (want %s)", t, strings.Join(api.MemoryTiers, " or "))
		case seen[t]:
			d.fail(index(path, i), n, "tier %q named twice", t)
		}
		seen[t] = true
	}
	return tiers
}
