package resources

import (
	"math"
	"testing"

	"pgregory.net/rapid"
)

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{
		{0, "0B"},
		{100, "100B"},
		{1000, "1KB"},
		{1024, "1KiB"},
		{1536, "1.5KiB"},
		{64 << 20, "64MiB"},
		{3 << 29, "1.5GiB"},
		{512e6, "512MB"},
		{8 << 30, "8GiB"},
		{1<<30 + 1, "1073741825B"},
		{1<<30 + 1024, "1048577KiB"},
		{-(64 << 20), "-64MiB"},
		{math.MaxInt64, "9223372036854775807B"},
		{math.MinInt64, "-8192PiB"},
		{1 << 50, "1PiB"}, {3 * PB, "3PB"},
	}
	for _, tt := range tests {
		if got := FormatBytes(tt.in); got != tt.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatCPU(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{{0, "0"}, {500, "500m"}, {2000, "2"}, {1500, "1500m"}, {1, "1m"}}
	for _, tt := range tests {
		if got := FormatCPU(tt.in); got != tt.want {
			t.Errorf("FormatCPU(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestFormatBandwidth(t *testing.T) {
	tests := []struct {
		in   int64
		want string
	}{{100, "100Mbps"}, {100000, "100Gbps"}, {2500, "2.5Gbps"}, {1000000, "1Tbps"}, {1000001, "1000.001Gbps"}, {-1000, "-1Gbps"}}
	for _, tt := range tests {
		if got := FormatBandwidth(tt.in); got != tt.want {
			t.Errorf("FormatBandwidth(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// Every non-negative int64 byte count is representable: FormatBytes is exact.
func TestBytesRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Mix arbitrary values with unit-aligned ones, which exercise the
		// fractional-unit paths that uniform random values almost never hit.
		x := rapid.OneOf(
			rapid.Int64Range(0, math.MaxInt64),
			rapid.Map(rapid.Int64Range(0, 1<<23-1), func(n int64) int64 { return n << 17 }),
			rapid.Map(rapid.Int64Range(0, 1<<30), func(n int64) int64 { return n * 1000 }),
		).Draw(t, "bytes")
		s := FormatBytes(x)
		got, err := ParseBytes(s)
		if err != nil || got != x {
			t.Fatalf("ParseBytes(FormatBytes(%d) = %q) = %d, %v", x, s, got, err)
		}
	})
}

func TestCPURoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := rapid.Int64Range(0, math.MaxInt64/1000).Draw(t, "milli")
		s := FormatCPU(x)
		got, err := ParseCPU(s)
		if err != nil || got != x {
			t.Fatalf("ParseCPU(FormatCPU(%d) = %q) = %d, %v", x, s, got, err)
		}
	})
}

func TestBandwidthRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		x := rapid.Int64Range(0, math.MaxInt64/1000).Draw(t, "mbps")
		s := FormatBandwidth(x)
		got, err := ParseBandwidth(s)
		if err != nil || got != x {
			t.Fatalf("ParseBandwidth(FormatBandwidth(%d) = %q) = %d, %v", x, s, got, err)
		}
	})
}

func FuzzParseBytes(f *testing.F) {
	for _, s := range []string{"64Mi", "1.5GiB", "512M", "-1", "abc", "9223372036854775807"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseBytes(s)
		if err != nil {
			return
		}
		if b < 0 {
			t.Fatalf("ParseBytes(%q) = %d, negative", s, b)
		}
		if got, err := ParseBytes(FormatBytes(b)); err != nil || got != b {
			t.Fatalf("round trip of %d (from %q) = %d, %v", b, s, got, err)
		}
	})
}
