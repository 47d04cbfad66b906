package resources

import (
	"strings"
	"testing"
)

func TestParseBytesWithUnit(t *testing.T) {
	cases := []struct {
		in      string
		want    int64
		wantErr []string // substrings of the error
	}{
		{in: "64Mi", want: 64 * MiB},
		{in: "1.5GiB", want: 3 * GiB / 2},
		{in: "32B", want: 32},
		{in: "0", want: 0},
		{in: "32", wantErr: []string{"32 has no unit", "write 32Mi", "32B for 32 bytes"}},
		{in: "536870912", wantErr: []string{"536870912Mi", "512MiB for 536870912 bytes"}},
		{in: "-1", wantErr: []string{"negative"}},
		{in: "lots", wantErr: []string{"unparseable"}},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseBytesWithUnit(tc.in)
			if len(tc.wantErr) == 0 {
				if err != nil || got != tc.want {
					t.Fatalf("ParseBytesWithUnit(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseBytesWithUnit(%q) = %d, want an error", tc.in, got)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestParseCPURequest(t *testing.T) {
	cases := []struct {
		in      string
		want    int64
		wantErr []string
	}{
		{in: "500m", want: 500},
		{in: "2", want: 2000},
		{in: "0.5", want: 500},
		{in: "99", want: 99000},
		{in: "128000m", want: 128000},
		{in: "500", wantErr: []string{"500 would be 500 cores", "write 500m", "500000m if you mean 500 whole cores"}},
		{in: "100", wantErr: []string{"100m"}},
		{in: "-1", wantErr: []string{"negative"}},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseCPURequest(tc.in)
			if len(tc.wantErr) == 0 {
				if err != nil || got != tc.want {
					t.Fatalf("ParseCPURequest(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseCPURequest(%q) = %d, want an error", tc.in, got)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
