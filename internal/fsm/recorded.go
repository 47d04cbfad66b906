package fsm

import (
	"fmt"
	"slices"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// RecordEvents writes events that the leader's soft-state cores derived:
// an incident opened, widened, merged or closed (internal/incident), an
// anomaly in the control plane's own signals raised or cleared
// (internal/anomaly). The entry changes nothing else: the cores' state
// lives on the leader, and a new leader derives it again from the events.
type RecordEvents struct {
	Events []api.Event `json:"events"`
}

// MaxRecordedEvents bounds the events of one entry.
const MaxRecordedEvents = 64

// recordable are the event types RecordEvents may carry: the others are
// derived from the commands that do what they tell.
var recordable = []string{api.EventIncident, api.EventAnomaly}

func applyRecordEvents(_ *state.WriteTxn, c *RecordEvents) error {
	if len(c.Events) > MaxRecordedEvents {
		return fmt.Errorf("record-events: %d events in one entry, at most %d", len(c.Events), MaxRecordedEvents)
	}
	for i, e := range c.Events {
		switch {
		case !slices.Contains(recordable, e.Type):
			return fmt.Errorf("record-events: events[%d]: type %q is not recordable (want one of %v)", i, e.Type, recordable)
		case e.Time.IsZero():
			return fmt.Errorf("record-events: events[%d]: no time", i)
		}
	}
	return nil
}

func recordEventsEvents(_ *state.Snapshot, c *RecordEvents) []api.Event {
	if applyRecordEvents(nil, c) != nil {
		return nil // refused whole by Apply
	}
	return slices.Clone(c.Events)
}
