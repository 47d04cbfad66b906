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
}

func (s *Stats) snapshot(elapsed time.Duration, nodes int) Snapshot {
	return Snapshot{Elapsed: elapsed, Nodes: nodes,
		Registered: s.registered.Load(), Registrations: s.registrations.Load(), RegisterErrors: s.registerErrors.Load(),
		Reregistrations: s.reregistrations.Load(), Heartbeats: s.heartbeats.Load(), HeartbeatErrors: s.heartbeatErrors.Load(),
		LateHeartbeats: s.lateHeartbeats.Load(), MaxLateness: s.maxLate.Load(),
		Watching: s.watching.Load(), WatchErrors: s.watchErrors.Load(),
		AllocsStarted: s.started.Load(), AllocsRunning: s.running.Load(), AllocsFinished: s.finished.Load(),
		ReportErrors: s.reportErrors.Load()}
}

// Line is a one-line progress report; prev (possibly zero) gives the rates
// since the previous line.
func (s Snapshot) Line(prev Snapshot) string {
	dt := (s.Elapsed - prev.Elapsed).Seconds()
	rate := func(now, before int64) float64 {
		if dt <= 0 {
			return 0
		}
		return float64(now-before) / dt
	}
	return fmt.Sprintf("%6.1fs  registered %d/%d (%.0f/s, %d errors)  heartbeats %d (%.0f/s, %d errors, %d late, worst %v)  watching %d  allocs started %d running %d finished %d  report errors %d",
		s.Elapsed.Seconds(), s.Registered, s.Nodes, rate(s.Registered, prev.Registered), s.RegisterErrors,
		s.Heartbeats, rate(s.Heartbeats, prev.Heartbeats), s.HeartbeatErrors, s.LateHeartbeats, s.MaxLateness.Round(time.Millisecond),
		s.Watching, s.AllocsStarted, s.AllocsRunning, s.AllocsFinished, s.ReportErrors)
}
