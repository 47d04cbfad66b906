package spec

import (
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/resources"
)

// This file holds the vocabulary of the project's seed document: the
// containers shorthand, the placementConstraints map and the seed's
// scheduling policy names. Each is mapped onto the strata.dev/v1 model
// explicitly; whatever has no Strata meaning yet is kept as a notice.

// topologyKeys are the placementConstraints keys that name node labels, and
// so map to label rules. Any other key is stored as a notice rather than
// turned into a hard rule no node could ever satisfy.
var topologyKeys = map[string]bool{
	api.LabelRegion: true, api.LabelZone: true, api.LabelDatacenter: true,
	api.LabelRow: true, api.LabelRack: true, api.LabelNode: true,
	api.LabelPowerZone: true, api.LabelSwitch: true, api.LabelSpine: true,
}

// windowSuffixes turn "avoid-zone-B-peak-hours" into value zone-B and window
// peak-hours. offpeak comes first because it is the longer match.
var windowSuffixes = []string{"offpeak-hours", "peak-hours"}

// PredictiveMLOptimized is the seed's scheduling policy name.
const PredictiveMLOptimized = "PredictiveMLOptimized"

// containers builds the single group the containers shorthand stands for:
// named after the workload, one replica, default restart policy.
func (d *decoder) containers(path string, n *yaml.Node, workload string) *api.TaskGroup {
	g := &api.TaskGroup{
		Name:          workload,
		Replicas:      DefaultReplicas,
		RestartPolicy: defaultRestartPolicy(),
		Tasks:         d.tasks(path, n, n),
	}
	d.checkGroupTotal(path, n, n, g)
	defaultLifecycle(g)
	return g
}

// placementConstraints maps the seed's flat constraint map onto every
// group: label rules for topology keys, task bandwidth for
// minBandwidthGbps, notices for everything else.
func (d *decoder) placementConstraints(path string, n *yaml.Node, groups []*api.TaskGroup) {
	d.fields(path, n, nil, func(key, p string, v *yaml.Node) bool {
		switch {
		case key == "minBandwidthGbps":
			d.minBandwidth(p, v, groups)
		case topologyKeys[key]:
			value, ok := d.text(p, v)
			if !ok {
				if !present(v) {
					d.fail(p, v, "expected a value, got null")
				}
				return true
			}
			d.constraintRule(p, v, key, value, groups)
		default:
			value, ok := d.text(p, v)
			if ok || !present(v) {
				d.notice(p, v, value, NotEnforced)
			}
		}
		return true
	})
}

// constraintRule maps "key: value", "key: prefer-value" and
// "key: avoid-value[-peak-hours]" to a require, prefer or avoid rule.
func (d *decoder) constraintRule(path string, n *yaml.Node, key, value string, groups []*api.TaskGroup) {
	kind, rest := kindRequire, value
	if v, ok := strings.CutPrefix(value, "prefer-"); ok {
		kind, rest = kindPrefer, v
	} else if v, ok := strings.CutPrefix(value, "avoid-"); ok {
		kind, rest = kindAvoid, v
	}
	r := api.LabelRule{Key: key, Op: api.OpEqual, Source: key + ": " + value}
	if kind.soft() {
		r.Weight = DefaultWeight
		for _, w := range windowSuffixes {
			if v, ok := strings.CutSuffix(rest, "-"+w); ok {
				rest, r.Window = v, w
				break
			}
		}
	}
	if problem := checkLabelValue(rest, false); problem != "" {
		d.fail(path, n, "%s", problem)
		return
	}
	for _, g := range groups {
		rule := r
		rule.Values = []string{rest} // each group owns its values
		pl := &g.Placement
		switch kind {
		case kindRequire:
			pl.Require = append(pl.Require, rule)
		case kindPrefer:
			pl.Prefer = append(pl.Prefer, rule)
		case kindAvoid:
			pl.Avoid = append(pl.Avoid, rule)
		}
	}
}

// minBandwidth is the bandwidth one instance of each group needs. Strata
// accounts bandwidth per task, so the shortfall between the group's task
// total and the minimum is added to the group's first task.
func (d *decoder) minBandwidth(path string, n *yaml.Node, groups []*api.TaskGroup) {
	q, ok := d.scalar(path, n, "a number of Gbps", "!!int", "!!float")
	if !ok {
		if !present(n) {
			d.fail(path, n, "expected a number of Gbps, got null")
		}
		return
	}
	mbps, err := resources.ParseBandwidth(q.Value + "Gbps")
	if err != nil {
		d.fail(path, q, "%s", err)
		return
	}
	if mbps == 0 {
		d.fail(path, q, "must be greater than zero")
		return
	}
	if problem := resources.BandwidthLimit.Check(mbps); problem != "" {
		d.fail(path, q, "%s", problem)
		return
	}
	for _, g := range groups {
		if len(g.Tasks) == 0 {
			continue
		}
		if total := g.Resources().NetMbps; total < mbps {
			g.Tasks[0].Resources.NetMbps += mbps - total
		}
	}
}

// schedulingPolicy decodes {type, rebalanceFrequency}, or just the type as
// a string.
func (d *decoder) schedulingPolicy(path string, n *yaml.Node, w *api.Workload) {
	if present(n) && deref(n).Kind == yaml.ScalarNode {
		d.policyType(path, n, w)
		return
	}
	d.fields(path, n, seedPolicyKeys, func(key, p string, v *yaml.Node) bool {
		switch key {
		case "type":
			d.policyType(p, v, w)
		case "rebalanceFrequency":
			if s, ok := d.text(p, v); ok {
				d.notice(p, v, s, "rebalancing is not implemented; "+NotEnforced)
			}
		default:
			return false
		}
		return true
	})
}

func (d *decoder) policyType(path string, n *yaml.Node, w *api.Workload) {
	s, ok := d.str(path, n)
	if !ok {
		return
	}
	switch {
	case knownPolicy(s):
		w.SchedulingPolicy.Type = s
	case s == PredictiveMLOptimized:
		w.SchedulingPolicy = api.SchedulingPolicy{Type: api.PolicyPredictive, Original: s}
	default:
		d.fail(path, n, "unknown scheduling policy %q (want %s)", s, policyList())
	}
}
