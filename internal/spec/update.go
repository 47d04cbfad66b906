package spec

import (
	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
)

// update decodes a group's update block (docs/deployments.md). Fields not
// written keep api.DefaultUpdatePolicy's values; checkUpdate applies the
// rules that relate fields to each other and to the group's replicas.
func (d *decoder) update(path string, n *yaml.Node) (*api.UpdatePolicy, map[string]*yaml.Node) {
	p := api.DefaultUpdatePolicy()
	seen := map[string]*yaml.Node{}
	d.fields(path, n, updateKeys, func(key, fp string, v *yaml.Node) bool {
		seen[key] = v
		switch key {
		case "maxParallel":
			if x, ok := d.integer(fp, v); ok {
				if x < 1 || x > MaxReplicas {
					d.fail(fp, v, "must be between 1 and %d, got %d", MaxReplicas, x)
				} else {
					p.MaxParallel = int(x)
				}
			}
		case "canary":
			if x, ok := d.integer(fp, v); ok {
				if x < 0 || x > MaxReplicas {
					d.fail(fp, v, "must be between 0 and %d, got %d", MaxReplicas, x)
				} else {
					p.Canary = int(x)
				}
			}
		case "minHealthyTime":
			p.MinHealthyTime, _ = d.duration(fp, v)
		case "healthyDeadline":
			p.HealthyDeadline, _ = d.duration(fp, v)
		case "progressDeadline":
			p.ProgressDeadline, _ = d.duration(fp, v)
		case "stagger":
			p.Stagger, _ = d.duration(fp, v)
		case "autoPromote":
			p.AutoPromote, _ = d.boolean(fp, v)
		case "autoRevert":
			p.AutoRevert, _ = d.boolean(fp, v)
		default:
			return false
		}
		return true
	})
	return &p, seen
}

// checkUpdate refuses update blocks that cannot work: more canaries than
// replicas, a healthy deadline a replacement can never meet, a progress
// deadline shorter than one replacement may take, auto-promotion without
// canaries.
func (d *decoder) checkUpdate(path string, g *api.TaskGroup, seen map[string]*yaml.Node) {
	p := g.Update
	at := func(field string) (string, *yaml.Node) { return join(path, field), seen[field] }
	if p.Canary > g.Replicas {
		fp, v := at("canary")
		d.fail(fp, v, "must not exceed the group's replicas (%d), got %d", g.Replicas, p.Canary)
	}
	if p.HealthyDeadline <= p.MinHealthyTime {
		fp, v := at("healthyDeadline")
		if !present(v) {
			fp, v = at("minHealthyTime")
		}
		d.fail(fp, v, "healthyDeadline (%s) must be longer than minHealthyTime (%s): no replacement could ever become healthy",
			FormatDuration(p.HealthyDeadline), FormatDuration(p.MinHealthyTime))
	}
	if p.ProgressDeadline != 0 && p.ProgressDeadline < p.HealthyDeadline {
		fp, v := at("progressDeadline")
		if !present(v) {
			fp, v = at("healthyDeadline")
		}
		d.fail(fp, v, "progressDeadline (%s) must be 0 or at least healthyDeadline (%s)",
			FormatDuration(p.ProgressDeadline), FormatDuration(p.HealthyDeadline))
	}
	if p.AutoPromote && p.Canary == 0 {
		fp, v := at("autoPromote")
		d.fail(fp, v, "autoPromote needs canary greater than 0 (there is nothing to promote)")
	}
}
