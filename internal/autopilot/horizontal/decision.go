package horizontal

// Sources of a decision: what set the replica count.
const (
	SourceForecast = "forecast" // the seasonal forecast, ahead of the start-up time
	SourceReactive = "reactive" // the work in flight now exceeded what the forecast provided
	SourceRecent   = "recent"   // the recent peak, held while the scale-in delay runs
	SourceIdle     = "idle"     // the forecast says idle and nothing arrived: scaled to zero
	SourceHold     = "hold"     // telemetry missing or stale: nothing changed
	SourceBounds   = "bounds"   // min or max (or the quota) decided
)

// Decision is a replica count and why.
type Decision struct {
	Replicas int    `json:"replicas"`
	Source   string `json:"source"`
	Held     bool   `json:"held,omitempty"` // nothing changed for want of telemetry
	// Forecast is the replica count the rise model asked for: the work in
	// flight plus its spares (in forecast-only mode: what it would have
	// set).
	Forecast int `json:"forecast"`
	// Reactive is what the reactive rule asked for: the work in flight,
	// plus Spare while there is any.
	Reactive int    `json:"reactive"`
	Reason   string `json:"reason"`
}
