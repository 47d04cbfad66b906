package spec

import (
	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
)

// disruption decodes a group's disruption budget:
//
//	disruption: {maxUnavailable: 1}
//
// maxUnavailable is a count of replicas, 0 or more (0: no voluntary moves
// before a drain's deadline). A group without the block gets
// internal/disruption's default (docs/nodes.md).
func (d *decoder) disruption(path string, n *yaml.Node) *api.DisruptionPolicy {
	p := &api.DisruptionPolicy{}
	var maxNode *yaml.Node
	ok := d.fields(path, n, disruptionKeys, func(key, fp string, v *yaml.Node) bool {
		switch key {
		case "maxUnavailable":
			maxNode = v
			if m, ok := d.integer(fp, v); ok {
				switch {
				case m < 0:
					d.fail(fp, v, "must be 0 or more, got %d", m)
				case m > MaxReplicas:
					d.fail(fp, v, "must be at most %d, got %d", MaxReplicas, m)
				default:
					p.MaxUnavailable = int(m)
				}
			}
		default:
			return false
		}
		return true
	})
	if !ok {
		return nil
	}
	if !present(maxNode) {
		d.missing(join(path, "maxUnavailable"), n, "required")
	}
	return p
}
