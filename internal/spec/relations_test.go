package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestRelationRules(t *testing.T) {
	w := mustParse(t, oneTask(cmd)+`      placement:
        spread:
          - rack
          - {key: zone, maxSkew: 2, mode: soft}
          - {key: row, maxSkew: 3, mode: soft, weight: 20}
        affinity:
          - {workload: cache, key: rack}
          - {workload: db, group: primary, key: zone, mode: soft, weight: 30}
        antiAffinity:
          - {key: node}
          - {workload: noisy, key: rack, mode: soft}
        communicatesWith:
          - ps
          - {workload: db, weight: 80}
          - {}
        dataLocality:
          - {dataset: imagenet}
          - {dataset: coco.v2, mode: hard}
`)
	equal(t, "placement", w.Groups[0].Placement, api.Placement{
		Spread: []api.SpreadRule{
			{Key: "rack", MaxSkew: 1, Mode: api.ModeHard},
			{Key: "zone", MaxSkew: 2, Mode: api.ModeSoft, Weight: 50},
			{Key: "row", MaxSkew: 3, Mode: api.ModeSoft, Weight: 20},
		},
		Affinity: []api.AffinityRule{
			{Workload: "cache", Key: "rack", Mode: api.ModeHard},
			{Workload: "db", Group: "primary", Key: "zone", Mode: api.ModeSoft, Weight: 30},
		},
		AntiAffinity: []api.AffinityRule{
			{Key: "node", Mode: api.ModeHard},
			{Workload: "noisy", Key: "rack", Mode: api.ModeSoft, Weight: 50},
		},
		CommunicatesWith: []api.PeerRule{{Workload: "ps", Weight: 50}, {Workload: "db", Weight: 80}, {Weight: 50}},
		DataLocality: []api.DataRule{
			{Dataset: "imagenet", Mode: api.ModeSoft, Weight: 50},
			{Dataset: "coco.v2", Mode: api.ModeHard},
		},
	})
	equal(t, "notices", w.Unenforced, []api.Notice(nil))
}

func TestRelationRuleErrors(t *testing.T) {
	tests := []struct {
		name  string
		rules string
		paths []string
		msg   string
	}{
		{"spread without key", "spread: [{maxSkew: 2}]", []string{"spec.groups[0].placement.spread[0].key"}, "required"},
		{"spread skew zero", "spread: [{key: rack, maxSkew: 0}]", []string{"spec.groups[0].placement.spread[0].maxSkew"}, "between 1 and"},
		{"spread twice over one key", "spread: [rack, {key: rack, maxSkew: 2}]", []string{"spec.groups[0].placement.spread[1].key"}, "merge them"},
		{"weight on a hard rule", "spread: [{key: rack, weight: 10}]", []string{"spec.groups[0].placement.spread[0].weight"}, "only soft rules"},
		{"unknown mode", "affinity: [{workload: x, key: rack, mode: maybe}]", []string{"spec.groups[0].placement.affinity[0].mode"}, "unknown mode"},
		{"group without workload", "antiAffinity: [{group: g, key: rack}]", []string{"spec.groups[0].placement.antiAffinity[0].group"}, "needs a workload"},
		{"affinity without key", "affinity: [{workload: x}]", []string{"spec.groups[0].placement.affinity[0].key"}, "required"},
		{"bad workload name", "affinity: [{workload: Bad_Name, key: rack}]", []string{"spec.groups[0].placement.affinity[0].workload"}, "invalid name"},
		{"unknown field", "affinity: [{workload: x, key: rack, topologyKey: rack}]", []string{"spec.groups[0].placement.affinity[0].topologyKey"}, "unknown field"},
		{"peer weight", "communicatesWith: [{workload: x, weight: 0}]", []string{"spec.groups[0].placement.communicatesWith[0].weight"}, "between 1 and 100"},
		{"dataset missing", "dataLocality: [{weight: 5, mode: soft}]", []string{"spec.groups[0].placement.dataLocality[0].dataset"}, "required"},
		{"dataset bad", "dataLocality: [{dataset: a/b}]", []string{"spec.groups[0].placement.dataLocality[0].dataset"}, "invalid dataset name"},
		{"null item", "spread: [null]", []string{"spec.groups[0].placement.spread[0]"}, "got null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(oneTask(cmd) + "      placement:\n        " + tt.rules + "\n"))
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Parse error = %v, want *spec.Errors", err)
			}
			if got := errs.Paths(); !slices.Equal(got, tt.paths) {
				t.Fatalf("paths = %q, want %q\n%v", got, tt.paths, err)
			}
			if !strings.Contains(errs.List[0].Message, tt.msg) {
				t.Fatalf("message = %q, want it to contain %q", errs.List[0].Message, tt.msg)
			}
		})
	}
}
