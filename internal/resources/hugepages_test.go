package resources

import (
	"strings"
	"testing"
)

func TestParseHugePageSize(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    int64
		wantErr string
	}{
		{"2Mi", HugePage2Mi, ""},
		{"1Gi", HugePage1Gi, ""},
		{"2048Ki", HugePage2Mi, ""},
		{"3Mi", 0, "power of two"},
		{"0", 0, "power of two"},
		{"-2Mi", 0, ""},
		{"4Mi", 0, "unsupported page size 4MiB"},
		{"2Xi", 0, "unknown unit"},
	} {
		got, err := ParseHugePageSize(tc.in)
		if tc.want != 0 && (err != nil || got != tc.want) {
			t.Errorf("ParseHugePageSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
		if tc.want == 0 && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("ParseHugePageSize(%q) = %d, %v; want an error with %q", tc.in, got, err, tc.wantErr)
		}
	}
}

func TestCheckHugePages(t *testing.T) {
	for _, tc := range []struct {
		size, amount int64
		want         string
	}{
		{HugePage2Mi, 64 << 20, ""},
		{HugePage1Gi, 2 << 30, ""},
		{HugePage2Mi, 0, "greater than zero"},
		{HugePage2Mi, -(2 << 20), "greater than zero"},
		{HugePage2Mi, 3 << 20, "whole number of 2MiB pages"},
		{HugePage1Gi, 512 << 20, "whole number of 1GiB pages"},
		{HugePage2Mi, MaxHugePages + HugePage2Mi, "at most"},
	} {
		got := CheckHugePages(tc.size, tc.amount)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("CheckHugePages(%d, %d) = %q, want %q", tc.size, tc.amount, got, tc.want)
		}
	}
}
