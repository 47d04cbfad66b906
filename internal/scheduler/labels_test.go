package scheduler

import (
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestMatchRule(t *testing.T) {
	labels := map[string]string{"rack": "r1", "zone": "z1"}
	tests := []struct {
		name string
		rule api.LabelRule
		want bool
	}{
		{"equal match", api.LabelRule{Key: "rack", Op: api.OpEqual, Values: []string{"r1"}}, true},
		{"equal mismatch", api.LabelRule{Key: "rack", Op: api.OpEqual, Values: []string{"r2"}}, false},
		{"equal missing label", api.LabelRule{Key: "row", Op: api.OpEqual, Values: []string{"a"}}, false},
		{"not equal match", api.LabelRule{Key: "rack", Op: api.OpNotEqual, Values: []string{"r2"}}, true},
		{"not equal mismatch", api.LabelRule{Key: "rack", Op: api.OpNotEqual, Values: []string{"r1"}}, false},
		{"not equal missing label", api.LabelRule{Key: "row", Op: api.OpNotEqual, Values: []string{"a"}}, true},
		{"in match", api.LabelRule{Key: "rack", Op: api.OpIn, Values: []string{"r0", "r1"}}, true},
		{"in mismatch", api.LabelRule{Key: "rack", Op: api.OpIn, Values: []string{"r2", "r3"}}, false},
		{"in missing label", api.LabelRule{Key: "row", Op: api.OpIn, Values: []string{"a"}}, false},
		{"notin match", api.LabelRule{Key: "rack", Op: api.OpNotIn, Values: []string{"r2"}}, true},
		{"notin mismatch", api.LabelRule{Key: "rack", Op: api.OpNotIn, Values: []string{"r1", "r2"}}, false},
		{"notin missing label", api.LabelRule{Key: "row", Op: api.OpNotIn, Values: []string{"a"}}, true},
		{"exists", api.LabelRule{Key: "zone", Op: api.OpExists}, true},
		{"exists missing", api.LabelRule{Key: "row", Op: api.OpExists}, false},
		{"unknown op", api.LabelRule{Key: "rack", Op: "~", Values: []string{"r1"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mustEqual(t, "match", matchRule(&tt.rule, labels), tt.want)
		})
	}
}

func TestRuleFailReason(t *testing.T) {
	tests := []struct {
		rule api.LabelRule
		want string
	}{
		{api.LabelRule{Key: "rack", Op: api.OpEqual, Values: []string{"r3"}}, "rack != r3"},
		{api.LabelRule{Key: "rack", Op: api.OpNotEqual, Values: []string{"r3"}}, "rack = r3"},
		{api.LabelRule{Key: "rack", Op: api.OpIn, Values: []string{"r1", "r2"}}, "rack not in [r1 r2]"},
		{api.LabelRule{Key: "rack", Op: api.OpNotIn, Values: []string{"r1", "r2"}}, "rack in [r1 r2]"},
		{api.LabelRule{Key: "ssd", Op: api.OpExists}, "no label ssd"},
		{api.LabelRule{Key: "rack", Op: "~"}, `rack: unknown operator "~"`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			mustEqual(t, "reason", ruleFailReason(tt.rule), tt.want)
		})
	}
}
