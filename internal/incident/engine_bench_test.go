package incident

import (
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkStepScattered is the engine's worst ordinary step: a cell of
// 10,000 nodes (100,000 allocations) with 5,000 scattered failures
// waiting, none of which share an improbable cause, so every value is
// scored and nothing is taken away.
func BenchmarkStepScattered(b *testing.B) {
	cell := newCell(200, 50, 10)
	rng := rand.New(rand.NewPCG(1, 2))
	sigs := make([]Signal, 5000)
	for i := range sigs {
		sigs[i] = cell.failed(rng.IntN(200)+1, rng.IntN(50)+1, rng.IntN(10)+1)
		sigs[i].Subject += "-" + string(rune('a'+i%26))
	}
	e := New(Policy{})
	e.SetCensus(cell.census)
	for _, s := range sigs {
		if _, err := e.Observe(s); err != nil {
			b.Fatal(err)
		}
	}
	now := day(12, 0, 1)
	b.ResetTimer()
	for b.Loop() {
		if cs := e.Step(now); len(cs) != 0 {
			b.Fatalf("scattered failures opened %d incidents", len(cs))
		}
		now = now.Add(time.Millisecond)
	}
}
