package cli

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/server"
)

// heartbeatFlags set how often nodes heartbeat (server.HeartbeatPolicy).
type heartbeatFlags struct {
	interval     time.Duration
	maxPerSecond float64
}

func (f *heartbeatFlags) register(cmd *cobra.Command) {
	cmd.Flags().DurationVar(&f.interval, "heartbeat-interval", server.DefaultHeartbeatInterval,
		"how often nodes heartbeat while the cell is small; a larger cell tells its nodes to heartbeat less often (see --max-heartbeats-per-second)")
	cmd.Flags().Float64Var(&f.maxPerSecond, "max-heartbeats-per-second", server.DefaultMaxHeartbeatsPerSecond,
		"bound on the heartbeats the whole cell sends: each node's interval is at least nodes/this (10,000 nodes at 500/s heartbeat every 20-25s and are down after 3 missed intervals); negative: no bound")
}
