package spec

import (
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
)

// gang decodes a group's gang policy: {minMember: 4, timeout: 5m,
// topology: rack}. minMember is checked against the group's replicas by
// checkGang, once the whole group is read, since YAML keys come in any
// order.
func (d *decoder) gang(path string, n *yaml.Node) (*api.GangPolicy, *yaml.Node) {
	gp := &api.GangPolicy{}
	var minMember *yaml.Node
	ok := d.fields(path, n, gangKeys, func(key, p string, v *yaml.Node) bool {
		switch key {
		case "minMember":
			if m, ok := d.integer(p, v); ok {
				if m < 1 {
					d.fail(p, v, "must be at least 1, got %d", m)
				} else {
					minMember = v
					gp.MinMember = int(min(m, MaxReplicas+1)) // checkGang refuses it above replicas
				}
			}
		case "timeout":
			gp.Timeout, _ = d.duration(p, v)
		case "topology":
			if s, ok := d.str(p, v); ok {
				if !topologyKeys[s] {
					d.fail(p, v, "unknown topology key %q (want one of %s)", s, strings.Join(knownTopologyKeys(), ", "))
				} else {
					gp.Topology = s
				}
			}
		default:
			return false
		}
		return true
	})
	if !ok {
		return nil, nil
	}
	return gp, minMember
}

// checkGang defaults minMember to every replica and refuses a gang larger
// than its group: such a gang could never be placed.
func (d *decoder) checkGang(path string, g *api.TaskGroup, minMember *yaml.Node) {
	if g.Gang == nil {
		return
	}
	switch {
	case minMember == nil:
		g.Gang.MinMember = g.Replicas
	case g.Gang.MinMember > g.Replicas:
		d.fail(join(path, "minMember"), minMember, "must be at most replicas (%d), got %s", g.Replicas, minMember.Value)
	}
}

func knownTopologyKeys() []string {
	keys := make([]string, 0, len(topologyKeys))
	for k := range topologyKeys {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
