package api

// NodeForecast is what the cell's models predict about one node: soft
// state the leader derives from health signals and usage telemetry
// (internal/predict), never written through raft and lost on a leader
// change (it is derived again). The scheduler reads it from its snapshot
// when the snapshot offers it (scheduler.ForecastReader). A prediction
// the models do not have is absent (its Has flag false), never zero.
type NodeForecast struct {
	// FailureRisk is the probability that the node fails within the
	// failure model's horizon (a week), when HasFailureRisk.
	FailureRisk    float64 `json:"failureRisk,omitempty"`
	HasFailureRisk bool    `json:"hasFailureRisk,omitempty"`
	// PeakCPUMilli is the CPU the node's work is predicted to use at its
	// peak over the forecast's horizon, when HasPeak.
	PeakCPUMilli int64 `json:"peakCPUMilli,omitempty"`
	HasPeak      bool  `json:"hasPeak,omitempty"`
}
