package spec

import (
	"errors"
	"slices"
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestParseCellConfig(t *testing.T) {
	c, err := ParseCellConfig([]byte(`apiVersion: strata.dev/v1
kind: CellConfig
schedulingPolicy: spread
timeWindows:
  - {name: peak-hours, days: [mon, tue, wed, thu, fri], start: "09:00", end: "18:00", timeZone: Europe/Berlin}
  - {name: night, start: "22:00", end: "06:00"}
limits: {workloads: 5000, replicas: 100000, namespaceReplicas: 20000}
`))
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "config", c, &api.CellConfig{SchedulingPolicy: api.PolicySpread, TimeWindows: []api.TimeWindow{
		{Name: "peak-hours", Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "18:00", TimeZone: "Europe/Berlin"},
		{Name: "night", Start: "22:00", End: "06:00"},
	}, Limits: &api.CellLimits{Workloads: 5000, Replicas: 100000, NamespaceReplicas: 20000}})
	if got := c.Limits.Effective(); got != (api.CellLimits{Workloads: 5000, Replicas: 100000, NamespaceWorkloads: 5000, NamespaceReplicas: 20000}) {
		t.Errorf("effective limits %+v", got)
	}
	if got := (*api.CellLimits)(nil).Effective(); got.Workloads != api.DefaultCellWorkloads || got.NamespaceReplicas != api.DefaultCellReplicas {
		t.Errorf("the defaults: %+v", got)
	}
}

func TestParseCellConfigErrors(t *testing.T) {
	_, err := ParseCellConfig([]byte(`apiVersion: strata.dev/v1
kind: CellConfig
schedulingPolicy: tetris
timeWindows:
  - {name: peak, days: [monday], start: "9:00", end: "25:00", timeZone: Mars/Olympus}
  - {name: peak, start: "10:00", end: "-9:00"}
  - {start: "10:00", end: "11:00"}
  - {name: x, start: "10:00", end: "11:00", color: red}
limits: {workloads: 0, replicas: many, namespaceWorkload: 3}
`))
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %v, want *Errors", err)
	}
	want := []string{"schedulingPolicy", "timeWindows[0].days[0]", "timeWindows[0].start", "timeWindows[0].end",
		"timeWindows[0].timeZone", "timeWindows[1].end", "timeWindows[2].name", "timeWindows[3].color",
		"limits.workloads", "limits.replicas", "limits.namespaceWorkload"}
	if got := errs.Paths(); !slices.Equal(got, want) {
		t.Fatalf("paths = %q\nwant %q\n%v", got, want, err)
	}
}
