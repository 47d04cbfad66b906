package fieldpath

import "testing"

func TestPaths(t *testing.T) {
	tests := []struct{ got, want string }{
		{Join("", "spec"), "spec"},
		{Join("spec", "groups"), "spec.groups"},
		{Index(Join("spec", "groups"), 2), "spec.groups[2]"},
		{Join("labels", "strata.dev/team"), `labels["strata.dev/team"]`},
		{Join("env", "a\x00b"), `env["a\x00b"]`},
		{Join("", "-x"), `["-x"]`},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %s, want %s", tt.got, tt.want)
		}
	}
}
