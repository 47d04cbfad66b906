package nodesim

import (
	"fmt"
	"sync/atomic"
	"time"
)

// Stats are the simulation's counters; the workers and watches update
// them atomically.
type Stats struct {
	registered, registrations, registerErrors, reregistrations atomic.Int64
	heartbeats, heartbeatErrors, lateHeartbeats                atomic.Int64
	watching, watchErrors                                      atomic.Int64
	started, running, finished, reportErrors                   atomic.Int64
	maxLate                                                    atomicDuration
	// Failures by cause (causes.go).
	registerCauses, heartbeatCauses, watchCauses, reportCauses causes
}

// Snapshot is Stats at one moment, for progress lines and -o json.
type Snapshot struct {
	Elapsed         time.Duration `json:"elapsed"`
	Nodes           int           `json:"nodes"`
	Registered      int64         `json:"registered"`      // nodes registered at least once
	Registrations   int64         `json:"registrations"`   // successful registrations, again after the server forgot a node too
	RegisterErrors  int64         `json:"registerErrors"`  // failed attempts (retried)
	Reregistrations int64         `json:"reregistrations"` // heartbeats the server answered "node unknown"
	Heartbeats      int64         `json:"heartbeats"`
	HeartbeatErrors int64         `json:"heartbeatErrors"`
	// LateHeartbeats were sent more than one interval after they were due
	// (the workers could not keep up); MaxLateness is the worst delay.
	LateHeartbeats int64         `json:"lateHeartbeats"`
	MaxLateness    time.Duration `json:"maxLateness"`
	Watching       int64         `json:"watching"` // nodes with a blocking query open
	WatchErrors    int64         `json:"watchErrors"`
	AllocsStarted  int64         `json:"allocsStarted"`
	AllocsRunning  int64         `json:"allocsRunning"`  // reported running (once each)
	AllocsFinished int64         `json:"allocsFinished"` // reported complete or failed
	ReportErrors   int64         `json:"reportErrors"`
	// Failures of each kind of request by cause, the most frequent first.
	RegisterFailures  []Cause `json:"registerFailures,omitempty"`
	HeartbeatFailures []Cause `json:"heartbeatFailures,omitempty"`
	WatchFailures     []Cause `json:"watchFailures,omitempty"`
	ReportFailures    []Cause `json:"reportFailures,omitempty"`
	// nodesim's own CPU time (user and system) and peak resident memory,
	// so that on a machine it shares with the servers their share is
	// known.
	CPUSeconds  float64 `json:"cpuSeconds"`
	MaxRSSBytes int64   `json:"maxRSSBytes"`
}

func (s *Stats) snapshot(elapsed time.Duration, nodes int) Snapshot {
	return Snapshot{Elapsed: elapsed, Nodes: nodes,
		Registered: s.registered.Load(), Registrations: s.registrations.Load(), RegisterErrors: s.registerErrors.Load(),
		Reregistrations: s.reregistrations.Load(), Heartbeats: s.heartbeats.Load(), HeartbeatErrors: s.heartbeatErrors.Load(),
		LateHeartbeats: s.lateHeartbeats.Load(), MaxLateness: s.maxLate.Load(),
		Watching: s.watching.Load(), WatchErrors: s.watchErrors.Load(),
		AllocsStarted: s.started.Load(), AllocsRunning: s.running.Load(), AllocsFinished: s.finished.Load(),
		ReportErrors:     s.reportErrors.Load(),
		RegisterFailures: s.registerCauses.snapshot(), HeartbeatFailures: s.heartbeatCauses.snapshot(),
		WatchFailures: s.watchCauses.snapshot(), ReportFailures: s.reportCauses.snapshot()}
}

// withUsage is s with nodesim's own CPU time and peak memory.
func (s Snapshot) withUsage() Snapshot {
	s.CPUSeconds, s.MaxRSSBytes = selfUsage()
	return s
}

// Line is a one-line progress report; prev (possibly zero) gives the rates
// since the previous line. Each kind of failure names its most frequent
// cause.
func (s Snapshot) Line(prev Snapshot) string {
	dt := (s.Elapsed - prev.Elapsed).Seconds()
	rate := func(now, before int64) float64 {
		if dt <= 0 {
			return 0
		}
		return float64(now-before) / dt
	}
	why := func(cs []Cause) string {
		if top := topCause(cs); top != "" {
			return " [" + top + "]"
		}
		return ""
	}
	cpu := 0.0
	if dt > 0 {
		cpu = (s.CPUSeconds - prev.CPUSeconds) / dt
	}
	return fmt.Sprintf("%6.1fs  registered %d/%d (%.0f/s, %d errors%s)  heartbeats %d (%.0f/s, %d errors%s, %d late, worst %v)  watching %d (%d errors%s)  allocs started %d running %d finished %d  report errors %d%s  nodesim cpu %.1fs (%.2f cores) rss %d MiB",
		s.Elapsed.Seconds(), s.Registered, s.Nodes, rate(s.Registered, prev.Registered), s.RegisterErrors, why(s.RegisterFailures),
		s.Heartbeats, rate(s.Heartbeats, prev.Heartbeats), s.HeartbeatErrors, why(s.HeartbeatFailures), s.LateHeartbeats, s.MaxLateness.Round(time.Millisecond),
		s.Watching, s.WatchErrors, why(s.WatchFailures), s.AllocsStarted, s.AllocsRunning, s.AllocsFinished, s.ReportErrors, why(s.ReportFailures),
		s.CPUSeconds, cpu, s.MaxRSSBytes>>20)
}
