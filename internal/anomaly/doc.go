// Package anomaly watches the control plane's own signals — raft commit
// latency, the evaluation backlog, heartbeat lateness, placement failures
// — and says when one leaves its normal, before a fixed alert threshold
// would: a latency that triples from 4 ms to 12 ms is an anomaly long
// before it crosses the 500 ms of StrataRaftCommitSlow.
//
// Each signal has a Detector: a robust baseline (the median and the
// median absolute deviation of its recent normal samples, in a
// variance-stabilising transform: log for latencies, square root for
// counts) and a one-sided CUSUM of the standardised, clipped deviations
// from it. A CUSUM is the classic change detector (Page, 1954): it adds up
// small excesses that a threshold on single samples misses and forgets
// single spikes, and its false alarm rate and delay follow from its two
// parameters. The baseline is seasonality-free (a short window), learns
// only from samples in control, and accepts a shift that lasts as the new
// normal. docs/incidents.md gives the measured delays and false alarms.
//
// Detectors are deterministic cores: samples and their times come from
// the caller, there is no clock, no goroutine, no I/O; a Detector is not
// safe for concurrent use. They never act on the cell: they raise events.
package anomaly
