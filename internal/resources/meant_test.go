package resources

import (
	"strings"
	"testing"
)

// TestWhatWasMeant: sizes need a unit and many bare cores are refused,
// each error giving the spellings to copy.
func TestWhatWasMeant(t *testing.T) {
	bytesWithUnit, cpuRequest := ParseBytesWithUnit, ParseCPURequest
	cases := []struct {
		parse   func(string) (int64, error)
		in      string
		want    int64
		wantErr []string // substrings of the error
	}{
		{parse: bytesWithUnit, in: "64Mi", want: 64 * MiB},
		{parse: bytesWithUnit, in: "1.5GiB", want: 3 * GiB / 2},
		{parse: bytesWithUnit, in: "32B", want: 32},
		{parse: bytesWithUnit, in: "0", want: 0},
		{parse: bytesWithUnit, in: "32", wantErr: []string{"32 has no unit", "write 32Mi", "32B for 32 bytes"}},
		{parse: bytesWithUnit, in: "536870912", wantErr: []string{"536870912Mi", "512MiB for 536870912 bytes"}},
		{parse: bytesWithUnit, in: "-1", wantErr: []string{"negative"}},
		{parse: bytesWithUnit, in: "lots", wantErr: []string{"unparseable"}},
		{parse: cpuRequest, in: "500m", want: 500},
		{parse: cpuRequest, in: "2", want: 2000},
		{parse: cpuRequest, in: "0.5", want: 500},
		{parse: cpuRequest, in: "99", want: 99000},
		{parse: cpuRequest, in: "128000m", want: 128000},
		{parse: cpuRequest, in: "500", wantErr: []string{"500 would be 500 cores", "write 500m", "500000m if you mean 500 whole cores"}},
		{parse: cpuRequest, in: "100", wantErr: []string{"100m"}},
		{parse: cpuRequest, in: "-1", wantErr: []string{"negative"}},
	}
	for _, tc := range cases {
		got, err := tc.parse(tc.in)
		if len(tc.wantErr) == 0 {
			if err != nil || got != tc.want {
				t.Errorf("%q: %d, %v; want %d", tc.in, got, err, tc.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("%q: %d, want an error", tc.in, got)
			continue
		}
		for _, w := range tc.wantErr {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q: error %q does not say %q", tc.in, err, w)
			}
		}
	}
}
