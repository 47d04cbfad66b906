package slots

import "testing"

func TestOfAndRing(t *testing.T) {
	cases := []struct{ t, width, slot, ring4 int64 }{
		{0, 60, 0, 0}, {59, 60, 0, 0}, {60, 60, 1, 1}, {-1, 60, -1, 3}, {-60, 60, -1, 3}, {-61, 60, -2, 2}, {300, 60, 5, 1},
	}
	for _, c := range cases {
		if s := Of(c.t, c.width); s != c.slot || Ring(s, 4) != c.ring4 {
			t.Errorf("Of(%d, %d) = %d ring %d, want %d ring %d", c.t, c.width, s, Ring(s, 4), c.slot, c.ring4)
		}
	}
}
