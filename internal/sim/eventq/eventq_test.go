package eventq

import (
	"math/rand/v2"
	"sort"
	"testing"
)

func TestPopsInOrder(t *testing.T) {
	type ev struct{ time, seq int }
	q := New(func(a, b *ev) bool {
		if a.time != b.time {
			return a.time < b.time
		}
		return a.seq < b.seq
	})
	rng := rand.New(rand.NewPCG(1, 2))
	var want []ev
	for i := 0; i < 500; i++ {
		e := ev{rng.IntN(50), i}
		want = append(want, e)
		q.Push(e)
	}
	sort.SliceStable(want, func(i, j int) bool { return want[i].time < want[j].time })
	for i, w := range want {
		if top, ok := q.Peek(); !ok || top != w {
			t.Fatalf("peek %d = %v, %v, want %v", i, top, ok, w)
		}
		if got := q.Pop(); got != w {
			t.Fatalf("pop %d = %v, want %v", i, got, w)
		}
	}
	if q.Len() != 0 {
		t.Fatalf("len %d after popping all", q.Len())
	}
	if _, ok := q.Peek(); ok {
		t.Fatal("peek on an empty queue")
	}
}
