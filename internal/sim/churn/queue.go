package churn

// waitQueue holds the pods that found no room, in arrival order, for at
// most patience seconds each.
type waitQueue struct {
	patience int64
	pods     []Arrival
}

// expire drops the pods that waited longer than patience by now and
// returns them.
func (q *waitQueue) expire(now int64) []Arrival {
	k := 0
	for k < len(q.pods) && now-q.pods[k].At > q.patience {
		k++
	}
	gone := q.pods[:k:k]
	q.pods = q.pods[k:]
	return gone
}

// nextExpiry is when the oldest waiting pod gives up, ok=false when none
// waits.
func (q *waitQueue) nextExpiry() (int64, bool) {
	if len(q.pods) == 0 {
		return 0, false
	}
	return q.pods[0].At + q.patience + 1, true
}

// retry offers room to the waiting pods in arrival order: try(a) places a
// pod or says it still does not fit; placed pods leave the queue.
func (q *waitQueue) retry(try func(a Arrival) bool) {
	keep := q.pods[:0]
	for _, a := range q.pods {
		if !try(a) {
			keep = append(keep, a)
		}
	}
	clear(q.pods[len(keep):])
	q.pods = keep
}
