package predict

import (
	"errors"
	"fmt"
)

// ErrOutOfOrder: a reading is older than one the history already holds (a
// clock that jumped back, a file out of order). The history is unchanged.
var ErrOutOfOrder = errors.New("reading older than the unit's latest")

// Window is how many days of readings a History keeps: the longest growth
// window of the features (LongDays) plus the day itself.
const Window = LongDays + 1

// History is one unit's readings over the last Window days, oldest first.
// The zero value is an empty history. It is not safe for concurrent use.
type History struct {
	readings []Reading
}

// Observe adds the unit's reading of a day. A second reading of the same
// day replaces the first; an older one is refused (ErrOutOfOrder).
// Readings older than Window days before r are dropped.
func (h *History) Observe(r Reading) error {
	if n := len(h.readings); n > 0 {
		last := h.readings[n-1].Day
		switch {
		case r.Day < last:
			return fmt.Errorf("%w: day %d after day %d", ErrOutOfOrder, r.Day, last)
		case r.Day == last:
			h.readings[n-1] = r
			return nil
		}
	}
	drop := 0
	for drop < len(h.readings) && h.readings[drop].Day <= r.Day-Window {
		drop++
	}
	if drop > 0 {
		h.readings = append(h.readings[:0], h.readings[drop:]...)
	}
	h.readings = append(h.readings, r)
	return nil
}

// Latest is the newest reading, or ok=false for an empty history.
func (h *History) Latest() (Reading, bool) {
	if len(h.readings) == 0 {
		return Reading{}, false
	}
	return h.readings[len(h.readings)-1], true
}

// Len is the number of readings held.
func (h *History) Len() int { return len(h.readings) }
