package httpapi

import (
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestValidateDevices(t *testing.T) {
	for _, tc := range []struct {
		name    string
		devices []api.Device
		want    string // the path of the first problem
	}{
		{"good", []api.Device{{ID: "0000:3b:00.0", Class: "fpga", NUMA: 0, Attributes: map[string]string{"model": "u250"}, Paths: []string{"/dev/vfio/31"}}}, ""},
		{"no id", []api.Device{{Class: "fpga", NUMA: -1}}, "devices[0].id"},
		{"twice", []api.Device{{ID: "a", Class: "fpga", NUMA: -1}, {ID: "a", Class: "fpga", NUMA: -1}}, "devices[1].id"},
		{"bad class", []api.Device{{ID: "a", Class: "FPGA", NUMA: -1}}, "devices[0].class"},
		{"gpu class", []api.Device{{ID: "a", Class: "gpu", NUMA: -1}}, "devices[0].class"},
		{"numa", []api.Device{{ID: "a", Class: "fpga", NUMA: -2}}, "devices[0].numa"},
		{"relative path", []api.Device{{ID: "a", Class: "fpga", NUMA: -1, Paths: []string{"dev/x"}}}, "devices[0].paths[0]"},
		{"unclean path", []api.Device{{ID: "a", Class: "fpga", NUMA: -1, Paths: []string{"/dev/../etc/shadow"}}}, "devices[0].paths[0]"},
		{"bad attribute", []api.Device{{ID: "a", Class: "fpga", NUMA: -1, Attributes: map[string]string{"bad key!": "x"}}}, `devices[0].attributes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f fieldErrors
			validateDevices(&f, tc.devices)
			got := ""
			if len(f) > 0 {
				got = f[0].Path
			}
			if !strings.HasPrefix(got, tc.want) || (tc.want == "" && got != "") {
				t.Fatalf("first problem at %q (%v), want %q", got, f, tc.want)
			}
		})
	}
}
