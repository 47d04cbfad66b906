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
`))
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "config", c, &api.CellConfig{SchedulingPolicy: api.PolicySpread, TimeWindows: []api.TimeWindow{
		{Name: "peak-hours", Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "18:00", TimeZone: "Europe/Berlin"},
		{Name: "night", Start: "22:00", End: "06:00"},
	}})
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
`))
	var errs *Errors
	if !errors.As(err, &errs) {
		t.Fatalf("error %v, want *Errors", err)
	}
	want := []string{"schedulingPolicy", "timeWindows[0].days[0]", "timeWindows[0].start", "timeWindows[0].end",
		"timeWindows[0].timeZone", "timeWindows[1].end", "timeWindows[2].name", "timeWindows[3].color"}
	if got := errs.Paths(); !slices.Equal(got, want) {
		t.Fatalf("paths = %q\nwant %q\n%v", got, want, err)
	}
}
