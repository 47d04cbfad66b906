package spec

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
)

// DefaultWeight is the weight of a prefer or avoid rule that names none,
// the middle of the 1..100 range.
const DefaultWeight = 50

// ruleKind is the list a rule sits in: hard require, or soft prefer/avoid.
type ruleKind string

const (
	kindRequire ruleKind = "require"
	kindPrefer  ruleKind = "prefer"
	kindAvoid   ruleKind = "avoid"
)

func (k ruleKind) soft() bool { return k != kindRequire }

// UndefinedWindowNotice is the notice of a rule restricted to a time window
// the cell does not define: the rule then applies at all times. The server
// adds it when a workload is registered (spec.Parse does not know the cell).
func UndefinedWindowNotice(window string) string {
	return fmt.Sprintf("time window %q is not defined by the cell; the rule applies at all times", window)
}

func (d *decoder) placement(path string, n *yaml.Node) api.Placement {
	var pl api.Placement
	d.fields(path, n, placementKeys, func(key, p string, v *yaml.Node) bool {
		switch key {
		case "require":
			pl.Require = d.rules(p, v, kindRequire)
		case "prefer":
			pl.Prefer = d.rules(p, v, kindPrefer)
		case "avoid":
			pl.Avoid = d.rules(p, v, kindAvoid)
		case "spread":
			pl.Spread = d.spreadRules(p, v)
		case "affinity":
			pl.Affinity = d.affinityRules(p, v)
		case "antiAffinity":
			pl.AntiAffinity = d.affinityRules(p, v)
		case "communicatesWith":
			pl.CommunicatesWith = d.peerRules(p, v)
		case "dataLocality":
			pl.DataLocality = d.dataRules(p, v)
		default:
			return false
		}
		return true
	})
	return pl
}

func (d *decoder) rules(path string, n *yaml.Node, kind ruleKind) []api.LabelRule {
	var rules []api.LabelRule
	d.items(path, n, func(_ int, p string, v *yaml.Node) {
		if r, ok := d.rule(p, v, kind); ok {
			rules = append(rules, r)
		}
	})
	return rules
}

// rule decodes one label rule: the long form {key, op, values, weight,
// window} or the short string form "rack=r1", "rack!=r2", "gpu" (exists).
func (d *decoder) rule(path string, n *yaml.Node, kind ruleKind) (api.LabelRule, bool) {
	r := api.LabelRule{}
	if kind.soft() {
		r.Weight = DefaultWeight
	}
	if !present(n) {
		d.fail(path, n, "expected a rule, got null")
		return r, false
	}
	n = d.resolve(n)
	if n == nil {
		return r, false
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" {
		return d.shortRule(path, n, r)
	}
	if n.Kind != yaml.MappingNode {
		d.typeErr(path, n, `a rule: {key, op, values} or a string such as "rack=r1"`)
		return r, false
	}
	errsBefore := len(d.errs.List)
	var key, op, values, weight, window *yaml.Node
	d.fields(path, n, labelRuleKeys, func(k, p string, v *yaml.Node) bool {
		switch k {
		case "key":
			key = v
			if s, ok := d.str(p, v); ok {
				r.Key = s
				if problem := checkLabelKey(s); problem != "" {
					d.fail(p, v, "%s", problem)
				}
			}
		case "op":
			op = v
			if s, ok := d.str(p, v); ok {
				switch s {
				case api.OpEqual, api.OpNotEqual, api.OpIn, api.OpNotIn, api.OpExists:
					r.Op = s
				default:
					d.fail(p, v, "unknown operator %q (want =, !=, in, notin or exists)", s)
				}
			}
		case "values":
			values = v
			r.Values, _ = d.strings(p, v, true)
			for i, val := range r.Values {
				if problem := checkLabelValue(val, false); problem != "" {
					d.fail(index(p, i), v, "%s", problem)
				}
			}
		case "weight":
			weight = v
			d.weight(p, v, &r.Weight)
		case "window":
			window = v
			if s, ok := d.str(p, v); ok {
				r.Window = s
				if problem := checkName(s); problem != "" {
					d.fail(p, v, "%s", problem)
				}
			}
		default:
			return false
		}
		return true
	})
	if !present(key) {
		d.missing(join(path, "key"), n, "required")
	}
	if !kind.soft() && present(weight) {
		d.fail(join(path, "weight"), weight, "only prefer and avoid rules have a weight")
	}
	if !kind.soft() && present(window) {
		d.fail(join(path, "window"), window, "only prefer and avoid rules have a time window")
	}
	if r.Op == "" && !present(op) {
		r.Op = api.OpIn
		if len(r.Values) == 0 && !present(values) {
			r.Op = api.OpExists
		}
	}
	d.checkOp(join(path, "values"), n, r)
	if len(d.errs.List) > errsBefore {
		return r, false
	}
	return r, true
}

// checkOp checks that a rule's values suit its operator.
func (d *decoder) checkOp(path string, n *yaml.Node, r api.LabelRule) {
	switch r.Op {
	case api.OpEqual, api.OpNotEqual:
		if len(r.Values) != 1 {
			d.fail(path, n, "operator %s needs exactly one value, got %d", r.Op, len(r.Values))
		}
	case api.OpIn, api.OpNotIn:
		if len(r.Values) == 0 {
			d.fail(path, n, "operator %s needs at least one value", r.Op)
		}
	case api.OpExists:
		if len(r.Values) != 0 {
			d.fail(path, n, "operator exists takes no values")
		}
	}
}

// shortRule parses "key=value", "key!=value" or "key" (exists).
func (d *decoder) shortRule(path string, n *yaml.Node, r api.LabelRule) (api.LabelRule, bool) {
	s := strings.TrimSpace(n.Value)
	key, value, op := s, "", api.OpExists
	if k, v, ok := strings.Cut(s, "!="); ok {
		key, value, op = k, v, api.OpNotEqual
	} else if k, v, ok := strings.Cut(s, "="); ok {
		key, value, op = k, v, api.OpEqual
	}
	r.Key, r.Op = strings.TrimSpace(key), op
	if problem := checkLabelKey(r.Key); problem != "" {
		d.fail(path, n, "in rule %q: %s", s, problem)
		return r, false
	}
	if op != api.OpExists {
		value = strings.TrimSpace(value)
		if problem := checkLabelValue(value, false); problem != "" {
			d.fail(path, n, "in rule %q: %s", s, problem)
			return r, false
		}
		r.Values = []string{value}
	}
	return r, true
}
