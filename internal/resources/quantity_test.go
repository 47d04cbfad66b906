package resources

import (
	"math"
	"strings"
	"testing"
)

func TestParseCPU(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{in: "500m", want: 500},
		{in: "2", want: 2000},
		{in: "0.5", want: 500},
		{in: "8", want: 8000},
		{in: ".25", want: 250},
		{in: "1.5", want: 1500},
		{in: "0", want: 0},
		{in: "0.0001", want: 1}, // finer than 1m rounds up
		{in: "2500m", want: 2500},
		{in: " 3 ", want: 3000},
		{in: "-1", wantErr: `negative quantity "-1"`},
		{in: "", wantErr: "empty quantity"},
		{in: "abc", wantErr: `unparseable quantity "abc"`},
		{in: "1.2.3", wantErr: `unknown unit ".3"`},
		{in: "2cores", wantErr: `unknown unit "cores" in cpu quantity "2cores"`},
		{in: "1e3", wantErr: `unknown unit "e3"`},
		{in: "99999999999999999999", wantErr: "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseCPU(tt.in)
			check(t, tt.in, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestParseBytes(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{in: "64Mi", want: 64 << 20},
		{in: "64MiB", want: 64 << 20},
		{in: "1Gi", want: 1 << 30},
		{in: "8GiB", want: 8 << 30},
		{in: "512M", want: 512e6},
		{in: "512MB", want: 512e6},
		{in: "1G", want: 1e9},
		{in: "100", want: 100},
		{in: "100B", want: 100},
		{in: "1.5Gi", want: 3 << 29},
		{in: "2Ti", want: 2 << 40},
		{in: "3T", want: 3e12},
		{in: "1k", want: 1000},
		{in: "1K", want: 1000},
		{in: "1Ki", want: 1024},
		{in: "1.3Ki", want: 1332}, // 1331.2 rounds up
		{in: "8Ei", wantErr: `unknown unit "Ei"`},
		{in: "64mb", wantErr: `unknown unit "mb" in byte quantity "64mb"`},
		{in: "-1Gi", wantErr: `negative quantity "-1Gi"`},
		{in: "abc", wantErr: `unparseable quantity "abc"`},
		{in: "Gi", wantErr: `unparseable quantity "Gi"`},
		{in: "-", wantErr: `unparseable quantity "-"`},
		{in: "9000000Ti", wantErr: `quantity "9000000Ti" is too large`},
		{in: "9223372036854775807", want: math.MaxInt64},
		{in: "9223372036854775808", wantErr: "too large"},
		{in: strings.Repeat("1", 65), wantErr: "longer than 64 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseBytes(tt.in)
			check(t, tt.in, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestParseBandwidth(t *testing.T) {
	tests := []struct {
		in      string
		want    int64
		wantErr string
	}{
		{in: "100Mbps", want: 100},
		{in: "10Gbps", want: 10000},
		{in: "1Gbit", want: 1000},
		{in: "100gbps", want: 100000},
		{in: "2.5Gbps", want: 2500},
		{in: "1Tbps", want: 1000000},
		{in: "1500Kbps", want: 2}, // 1.5 Mbps rounds up
		{in: "250", want: 250},
		{in: "10GB", wantErr: `unknown unit "GB" in bandwidth "10GB"`},
		{in: "-5Mbps", wantErr: `negative quantity "-5Mbps"`},
		{in: "fast", wantErr: `unparseable quantity "fast"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseBandwidth(tt.in)
			check(t, tt.in, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestParseGPU(t *testing.T) {
	tests := []struct {
		in                string
		wantWhole, wantMi int64
		wantErr           string
	}{
		{in: "1", wantWhole: 1},
		{in: "4", wantWhole: 4},
		{in: "0", wantWhole: 0},
		{in: "0.5", wantMi: 500},
		{in: "0.25", wantMi: 250},
		{in: "2.0", wantWhole: 2},
		{in: "1.5", wantErr: "fractional and above 1"},
		{in: "-1", wantErr: `negative quantity "-1"`},
		{in: "1gpu", wantErr: `unknown unit "gpu"`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			whole, milli, err := ParseGPU(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseGPU(%q) error = %v, want it to contain %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || whole != tt.wantWhole || milli != tt.wantMi {
				t.Fatalf("ParseGPU(%q) = %d, %d, %v; want %d, %d", tt.in, whole, milli, err, tt.wantWhole, tt.wantMi)
			}
		})
	}
}

func check(t *testing.T, in string, got int64, err error, want int64, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("parse(%q) = %d, %v; want error containing %q", in, got, err, wantErr)
		}
		return
	}
	if err != nil || got != want {
		t.Fatalf("parse(%q) = %d, %v; want %d", in, got, err, want)
	}
}
