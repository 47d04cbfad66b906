package topology

import (
	"slices"
	"testing"
)

func TestWider(t *testing.T) {
	tests := []struct {
		key  string
		want []string
	}{
		{"", nil},
		{"rack", []string{"rack", "row", "datacenter", "zone", "region"}},
		{"node", Chain},
		{"region", []string{"region"}},
		{"switch", []string{"switch", "rack", "row", "datacenter", "zone", "region"}},
	}
	for _, tt := range tests {
		t.Run(tt.key, func(t *testing.T) {
			if got := Wider(tt.key); !slices.Equal(got, tt.want) {
				t.Fatalf("Wider(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}

func TestHops(t *testing.T) {
	n := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	full := func(region, zone, dc, row, rack string) map[string]string {
		return n("region", region, "zone", zone, "datacenter", dc, "row", row, "rack", rack)
	}
	tests := []struct {
		name string
		aID  string
		a    map[string]string
		bID  string
		b    map[string]string
		want int
	}{
		{"same node", "n1", full("r", "z", "d", "w", "k"), "n1", full("r", "z", "d", "w", "k"), 0},
		{"same rack", "n1", full("r", "z", "d", "w", "k"), "n2", full("r", "z", "d", "w", "k"), 2},
		{"same row", "n1", full("r", "z", "d", "w", "k1"), "n2", full("r", "z", "d", "w", "k2"), 4},
		{"same datacenter", "n1", full("r", "z", "d", "w1", "k1"), "n2", full("r", "z", "d", "w2", "k2"), 6},
		{"same zone", "n1", full("r", "z", "d1", "w1", "k1"), "n2", full("r", "z", "d2", "w2", "k2"), 8},
		{"same region", "n1", full("r", "z1", "d1", "w1", "k1"), "n2", full("r", "z2", "d2", "w2", "k2"), 10},
		{"other region", "n1", full("r1", "z1", "d1", "w1", "k1"), "n2", full("r2", "z2", "d2", "w2", "k2"), MaxHops},
		{"no labels", "n1", nil, "n2", nil, MaxHops},
		{"switch beats rack", "n1", n("switch", "tor1", "rack", "k1"), "n2", n("switch", "tor1", "rack", "k2"), 2},
		{"switch and rack never meet", "n1", n("switch", "x"), "n2", n("rack", "x"), MaxHops},
		{"spine", "n1", n("spine", "s1", "row", "w1"), "n2", n("spine", "s1", "row", "w2"), 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Hops(tt.aID, tt.a, tt.bID, tt.b); got != tt.want {
				t.Fatalf("Hops = %d, want %d", got, tt.want)
			}
			if got := Hops(tt.bID, tt.b, tt.aID, tt.a); got != tt.want {
				t.Fatalf("Hops is not symmetric: %d, want %d", got, tt.want)
			}
		})
	}
}
