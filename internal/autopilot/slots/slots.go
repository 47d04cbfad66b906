// Package slots numbers fixed-width time slots the way the autoscaling
// recommenders keep their histories: a time's slot is its floor division by
// the width (times before 0 included), and a slot's place in a ring of n is
// its non-negative remainder. It holds no state and never reads the clock.
package slots

// Of is the number of the slot of width seconds holding time t.
func Of(t, width int64) int64 {
	q := t / width
	if t%width != 0 && (t < 0) != (width < 0) {
		q--
	}
	return q
}

// Ring is slot s's place in a ring of n places, in [0, n).
func Ring(s, n int64) int64 {
	m := s % n
	if m < 0 {
		m += n
	}
	return m
}
