package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestParseDevices(t *testing.T) {
	w := mustParse(t, oneTask(cmd+`          resources: {cpu: 2, exclusiveCores: true}
          devices:
            - {class: fpga, count: 2, attributes: {model: u250}, numaLocal: true}
            - class: nic-vf
`))
	got := w.Groups[0].Tasks[0].Devices
	want := []api.DeviceRequest{
		{Class: "fpga", Count: 2, Attributes: map[string]string{"model": "u250"}, NUMALocal: true},
		{Class: "nic-vf", Count: 1},
	}
	equal(t, "devices", got, want)
}

func TestDeviceErrors(t *testing.T) {
	const p = "spec.groups[0].tasks[0].devices"
	for _, tc := range []struct {
		name, devices string
		wantPaths     []string
		wantMessage   string
	}{
		{"count zero", "[{class: fpga, count: 0}]", []string{p + "[0].count"}, "at least 1"},
		{"count negative", "[{class: fpga, count: -2}]", []string{p + "[0].count"}, "at least 1"},
		{"count too large", "[{class: fpga, count: 100000}]", []string{p + "[0].count"}, "at most 256"},
		{"class missing", "[{count: 1}]", []string{p + "[0].class"}, "required"},
		{"class upper case", "[{class: FPGA}]", []string{p + "[0].class"}, "lower-case"},
		{"class with a slash", "[{class: nvidia.com/gpu}]", []string{p + "[0].class"}, "lower-case"},
		{"class gpu", "[{class: gpu}]", []string{p + "[0].class"}, "resources.gpu"},
		{"unknown field", "[{class: fpga, kind: x}]", []string{p + "[0].kind"}, "unknown field"},
		{"numaLocal without exclusive cores", "[{class: fpga, numaLocal: true}]", []string{p + "[0].numaLocal"}, "exclusiveCores"},
		{"asked twice", "[{class: fpga}, {class: fpga}]", []string{p + "[1].class"}, "twice"},
		{"not a list", "fpga", []string{p}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(oneTask(cmd + "          devices: " + tc.devices + "\n")))
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("error is %T, want *spec.Errors: %v", err, err)
			}
			if got := errs.Paths(); !slices.Equal(got, tc.wantPaths) {
				t.Fatalf("error paths = %q, want %q\n%v", got, tc.wantPaths, err)
			}
			if !strings.Contains(errs.List[0].Message, tc.wantMessage) {
				t.Errorf("message %q, want it to contain %q", errs.List[0].Message, tc.wantMessage)
			}
		})
	}
}
