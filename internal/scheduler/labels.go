package scheduler

import (
	"fmt"
	"strings"

	"github.com/strata-dev/strata/api"
)

// labelRule is a LabelRule with its failure text computed once per plan, so
// that rejecting a node costs no formatting.
type labelRule struct {
	api.LabelRule
	failReason string
	// m matches by the cell's NodeIndex, bound on first use; nil without
	// an index.
	m     *ruleMatcher
	bound bool
}

// matches reports whether node i of the cell satisfies r.
func (r *labelRule) matches(c *cell, i int) bool {
	if !r.bound {
		r.bound = true
		if c.nodeIndex != nil {
			r.m = bindRule(&r.LabelRule, c.nodeIndex.column(r.Key))
		}
	}
	if r.m != nil {
		return r.m.match(i)
	}
	return matchRule(&r.LabelRule, c.node(i).Labels)
}

func compileRules(rules []api.LabelRule) []labelRule {
	out := make([]labelRule, len(rules))
	for i, r := range rules {
		out[i] = labelRule{LabelRule: r, failReason: ruleFailReason(r)}
	}
	return out
}

// matchRule reports whether labels satisfy r. A missing label satisfies only
// the negative operators (!=, notin), as in Kubernetes node affinity.
func matchRule(r *api.LabelRule, labels map[string]string) bool {
	v, ok := labels[r.Key]
	switch r.Op {
	case api.OpExists:
		return ok
	case api.OpEqual:
		return ok && len(r.Values) > 0 && v == r.Values[0]
	case api.OpNotEqual:
		return !ok || len(r.Values) == 0 || v != r.Values[0]
	case api.OpIn:
		return ok && contains(r.Values, v)
	case api.OpNotIn:
		return !ok || !contains(r.Values, v)
	}
	return false // an unknown operator never matches: safe for require
}

func contains(values []string, v string) bool {
	for _, x := range values {
		if x == v {
			return true
		}
	}
	return false
}

// ruleFailReason words why a node fails a required rule, e.g. "rack != r3"
// for rack = r3 and "rack not in [r1 r2]" for rack in (r1, r2).
func ruleFailReason(r api.LabelRule) string {
	first := ""
	if len(r.Values) > 0 {
		first = r.Values[0]
	}
	list := "[" + strings.Join(r.Values, " ") + "]"
	switch r.Op {
	case api.OpExists:
		return "no label " + r.Key
	case api.OpEqual:
		return r.Key + " != " + first
	case api.OpNotEqual:
		return r.Key + " = " + first
	case api.OpIn:
		return r.Key + " not in " + list
	case api.OpNotIn:
		return r.Key + " in " + list
	}
	return fmt.Sprintf("%s: unknown operator %q", r.Key, r.Op)
}

// ruleText writes a rule the way a user would: "zone=z1", "rack in [r1 r2]",
// "gpu" (exists).
func ruleText(r *api.LabelRule) string {
	switch r.Op {
	case api.OpExists:
		return r.Key
	case api.OpEqual, api.OpNotEqual:
		v := ""
		if len(r.Values) > 0 {
			v = r.Values[0]
		}
		return r.Key + r.Op + v
	}
	return r.Key + " " + r.Op + " [" + strings.Join(r.Values, " ") + "]"
}
