package fsm

import (
	"fmt"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// SetCellConfig replaces the cell configuration.
type SetCellConfig struct {
	Config *api.CellConfig `json:"config"`
	Time   time.Time       `json:"time"` // stamped by the proposer, for events
}

// SetCellID records the cell's identity; the FSM keeps the first one.
type SetCellID struct {
	ID   string    `json:"id"`
	Time time.Time `json:"time"` // stamped by the proposer, for events
}

// SetCellSecret sets one cell secret (the join token).
type SetCellSecret struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func applySetCellConfig(w *state.WriteTxn, c *SetCellConfig) error { return w.SetCellConfig(c.Config) }

func setCellConfigEvents(_ *state.Snapshot, c *SetCellConfig) []api.Event {
	return []api.Event{{Time: c.Time, Type: api.EventCellConfig, Message: describeConfig(c.Config)}}
}

// describeConfig words a cell configuration for the event list.
func describeConfig(c *api.CellConfig) string {
	policy := c.SchedulingPolicy
	if policy == "" {
		policy = api.PolicyBinpack
	}
	msg := "cell configuration set: default policy " + policy
	if names := c.WindowNames(); len(names) > 0 {
		msg += ", time windows " + strings.Join(names, ", ")
	}
	if c.Limits != nil {
		l := c.Limits.Effective()
		msg += fmt.Sprintf(", limits of %d workloads and %d replicas (%d and %d per namespace)", l.Workloads, l.Replicas, l.NamespaceWorkloads, l.NamespaceReplicas)
	}
	return msg
}

func applySetCellID(w *state.WriteTxn, c *SetCellID) error { return w.SetCellID(c.ID) }

func setCellIDEvents(snap *state.Snapshot, c *SetCellID) []api.Event {
	if snap.CellID() != "" {
		return nil
	}
	return []api.Event{{Time: c.Time, Type: api.EventCellCreated, Message: "cell " + c.ID + " created"}}
}

func applySetCellSecret(w *state.WriteTxn, c *SetCellSecret) error {
	return w.SetCellSecret(c.Name, c.Value)
}

// setCellSecretEffects: every server keeps the join token in its data dir.
func setCellSecretEffects(c *SetCellSecret) Effects {
	if c.Name == state.CellSecretJoinToken {
		return Effects{JoinToken: c.Value}
	}
	return Effects{}
}
