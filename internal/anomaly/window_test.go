package anomaly

import (
	"math"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-dev/strata/internal/stats"
)

// TestPropertyWindowMatchesSort: the window's incremental median and MAD
// are those of sorting its current samples.
func TestPropertyWindowMatchesSort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		size := rapid.IntRange(1, 12).Draw(t, "size")
		w := newWindow(size)
		var kept []float64
		for _, x := range rapid.SliceOfN(rapid.IntRange(-5, 5), 1, 60).Draw(t, "xs") {
			y := float64(x) / 2 // ties on purpose
			w.add(y)
			kept = append(kept, y)
			if len(kept) > size {
				kept = kept[1:]
			}
			wantM, wantS := stats.MedianMAD(kept)
			gotM, gotS := w.medianMAD()
			if math.Abs(gotM-wantM) > 1e-12 || math.Abs(gotS-wantS) > 1e-12 {
				t.Fatalf("window %v: median/scale %g/%g, want %g/%g", kept, gotM, gotS, wantM, wantS)
			}
		}
	})
}
