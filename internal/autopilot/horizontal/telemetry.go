package horizontal

// Telemetry is what the autoscaler knows of a group at one decision: its
// replicas now and its demand since the previous decision. The caller (the
// simulator, or the cell's leader from the agents' samples) fills it; the
// autoscaler never measures anything itself.
type Telemetry struct {
	// Now is the decision's time, in seconds.
	Now int64
	// Missing says the demand figures below could not be read (a metric
	// endpoint that answered nothing or garbage, samples that stopped); it
	// names what is missing. The autoscaler then holds.
	Missing string
	// Age is how old the newest demand sample is, in seconds; samples
	// older than Config.MaxTelemetryAge make the autoscaler hold.
	Age int64

	// Replicas now: Ready serve, Starting are on their way.
	Ready, Starting int
	// InFlight is the work in the group now (requests being served, or
	// the application metric's value); Waiting is the part of it no
	// replica has taken yet.
	InFlight, Waiting int
	// PeakInFlight is the highest InFlight since the previous decision.
	PeakInFlight int
	// Arrivals counts the requests that arrived since the previous
	// decision; BusySeconds and ReadySeconds are replica-seconds busy and
	// ready over the same span (their ratio is the HPA's utilisation).
	Arrivals                  int
	BusySeconds, ReadySeconds float64
	// StartupSeconds are the start-up times (request to ready) of the
	// replicas that became ready since the previous decision.
	StartupSeconds []float64
}

// Utilisation is the share of ready replica time that was busy since the
// previous decision, and false when no replica was ready.
func (t Telemetry) Utilisation() (float64, bool) {
	if t.ReadySeconds <= 0 {
		return 0, false
	}
	return t.BusySeconds / t.ReadySeconds, true
}
