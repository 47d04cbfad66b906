package spec

import (
	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
)

// This file decodes the placement rules that relate a group to topology
// domains and to other workloads: spread, affinity, antiAffinity,
// communicatesWith and dataLocality (docs/workload-spec.md).

// MaxSkewLimit bounds maxSkew; a larger skew is no constraint at all.
const MaxSkewLimit = 1_000_000

// ruleMode decodes a rule's mode (hard or soft) and weight, which only a
// soft rule may have; def is the mode when none is given.
type ruleMode struct {
	mode, weight *yaml.Node
}

func (d *decoder) modeField(key, p string, v *yaml.Node, m *ruleMode, mode *string, weight *int) bool {
	switch key {
	case "mode":
		m.mode = v
		if s, ok := d.str(p, v); ok {
			switch s {
			case api.ModeHard, api.ModeSoft:
				*mode = s
			default:
				d.fail(p, v, "unknown mode %q (want %s or %s)", s, api.ModeHard, api.ModeSoft)
			}
		}
	case "weight":
		m.weight = v
		d.weight(p, v, weight)
	default:
		return false
	}
	return true
}

// finishMode applies the defaults: def when no mode is given, weight
// DefaultWeight for a soft rule without one; a hard rule takes no weight.
func (d *decoder) finishMode(path string, m ruleMode, def string, mode *string, weight *int) {
	if *mode == "" && !present(m.mode) {
		*mode = def
	}
	switch {
	case *mode == api.ModeSoft && *weight == 0 && !present(m.weight):
		*weight = DefaultWeight
	case *mode == api.ModeHard && present(m.weight):
		d.fail(join(path, "weight"), m.weight, "only soft rules have a weight (add mode: soft)")
	}
}

// topologyKey decodes a label key naming a topology level.
func (d *decoder) topologyKey(p string, v *yaml.Node) string {
	s, ok := d.str(p, v)
	if !ok {
		return ""
	}
	if problem := checkLabelKey(s); problem != "" {
		d.fail(p, v, "%s", problem)
		return ""
	}
	return s
}

func (d *decoder) spreadRules(path string, n *yaml.Node) []api.SpreadRule {
	var out []api.SpreadRule
	keys := map[string]bool{}
	d.items(path, n, func(_ int, p string, v *yaml.Node) {
		r := api.SpreadRule{MaxSkew: 1, Mode: api.ModeHard}
		if present(v) && deref(v).Kind == yaml.ScalarNode {
			// Short form: "rack" is {key: rack, maxSkew: 1, mode: hard}.
			r.Key = d.topologyKey(p, v)
			if r.Key != "" && keys[r.Key] {
				d.fail(p, v, "a second spread rule over %q: merge them into one", r.Key)
			}
			keys[r.Key] = true
			out = append(out, r)
			return
		}
		r.Mode = ""
		var key, skew *yaml.Node
		var m ruleMode
		ok := d.fields(p, v, spreadKeys, func(k, fp string, fv *yaml.Node) bool {
			switch k {
			case "key":
				key = fv
				r.Key = d.topologyKey(fp, fv)
			case "maxSkew":
				skew = fv
				if s, ok := d.integer(fp, fv); ok {
					if s < 1 || s > MaxSkewLimit {
						d.fail(fp, fv, "must be between 1 and %d, got %d", MaxSkewLimit, s)
					} else {
						r.MaxSkew = int(s)
					}
				}
			default:
				return d.modeField(k, fp, fv, &m, &r.Mode, &r.Weight)
			}
			return true
		})
		if !ok || !d.requireMapping(p, v) {
			return
		}
		if !present(key) {
			d.missing(join(p, "key"), v, "required: the topology key to spread over, e.g. rack or zone")
		}
		if !present(skew) {
			r.MaxSkew = 1
		}
		d.finishMode(p, m, api.ModeHard, &r.Mode, &r.Weight)
		if r.Key != "" && keys[r.Key] {
			d.fail(join(p, "key"), key, "a second spread rule over %q: merge them into one", r.Key)
		}
		keys[r.Key] = true
		out = append(out, r)
	})
	return out
}

// affinityRules decodes affinity or antiAffinity rules.
func (d *decoder) affinityRules(path string, n *yaml.Node) []api.AffinityRule {
	var out []api.AffinityRule
	d.items(path, n, func(_ int, p string, v *yaml.Node) {
		r := api.AffinityRule{}
		var key, group *yaml.Node
		var m ruleMode
		ok := d.fields(p, v, affinityKeys, func(k, fp string, fv *yaml.Node) bool {
			switch k {
			case "workload":
				r.Workload = d.name(fp, fv)
			case "group":
				group = fv
				r.Group = d.name(fp, fv)
			case "key":
				key = fv
				r.Key = d.topologyKey(fp, fv)
			default:
				return d.modeField(k, fp, fv, &m, &r.Mode, &r.Weight)
			}
			return true
		})
		if !ok || !d.requireMapping(p, v) {
			return
		}
		if !present(key) {
			d.missing(join(p, "key"), v, "required: the topology level, e.g. node, rack or zone")
		}
		if present(group) && r.Workload == "" {
			d.fail(join(p, "group"), group, "needs a workload (without one the rule is about this group's own replicas)")
		}
		d.finishMode(p, m, api.ModeHard, &r.Mode, &r.Weight)
		out = append(out, r)
	})
	return out
}

func (d *decoder) peerRules(path string, n *yaml.Node) []api.PeerRule {
	var out []api.PeerRule
	d.items(path, n, func(_ int, p string, v *yaml.Node) {
		r := api.PeerRule{Weight: DefaultWeight}
		if present(v) && deref(v).Kind == yaml.ScalarNode {
			r.Workload = d.name(p, v) // short form: just the workload
			out = append(out, r)
			return
		}
		ok := d.fields(p, v, peerKeys, func(k, fp string, fv *yaml.Node) bool {
			switch k {
			case "workload":
				r.Workload = d.name(fp, fv)
			case "weight":
				d.weight(fp, fv, &r.Weight)
			default:
				return false
			}
			return true
		})
		if ok && d.requireMapping(p, v) {
			out = append(out, r)
		}
	})
	return out
}

func (d *decoder) dataRules(path string, n *yaml.Node) []api.DataRule {
	var out []api.DataRule
	d.items(path, n, func(_ int, p string, v *yaml.Node) {
		r := api.DataRule{}
		var dataset *yaml.Node
		var m ruleMode
		ok := d.fields(p, v, dataRuleKeys, func(k, fp string, fv *yaml.Node) bool {
			if k != "dataset" {
				return d.modeField(k, fp, fv, &m, &r.Mode, &r.Weight)
			}
			dataset = fv
			if s, ok := d.str(fp, fv); ok {
				r.Dataset = s
				if problem := checkLabelValue(s, false); problem != "" {
					d.fail(fp, fv, "invalid dataset name: %s", problem)
				}
			}
			return true
		})
		if !ok || !d.requireMapping(p, v) {
			return
		}
		if !present(dataset) {
			d.missing(join(p, "dataset"), v, "required: the dataset's name, as in the node label "+api.DatasetLabelPrefix+"<dataset>")
		}
		d.finishMode(p, m, api.ModeSoft, &r.Mode, &r.Weight)
		out = append(out, r)
	})
	return out
}

// requireMapping refuses a null list item: "- " with nothing after it.
func (d *decoder) requireMapping(path string, n *yaml.Node) bool {
	if !present(n) {
		d.fail(path, n, "expected a mapping, got null")
		return false
	}
	return true
}

// weight decodes a rule weight, 1 to 100, into dst.
func (d *decoder) weight(path string, n *yaml.Node, dst *int) {
	if w, ok := d.integer(path, n); ok {
		if w < 1 || w > 100 {
			d.fail(path, n, "must be between 1 and 100, got %d", w)
		} else {
			*dst = int(w)
		}
	}
}
