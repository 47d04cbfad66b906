// Package lease is the arithmetic that makes "at most once" hold across
// partitions (invariant 8). An agent holds a lease on its node, renewed by
// every successful heartbeat: the server grants Lease with each one. The
// agent fences itself — stops the copies of at-most-once groups — before
// the lease can have ended by anyone's clock; the server replaces those
// copies only after the lease has surely ended by every clock. Both sides
// use the functions here, which are pure and table-tested: no clock is
// read, times come in as arguments.
//
//	agent:  renewal sent at s ──── stop (SIGTERM) ── kill (SIGKILL) ─┐ ≤ s + Lease (real time)
//	server: last heartbeat seen at t ≥ s ─────────────────────────────────── replace after
//	        t + Lease·(1+2·Drift) + grace + Margin
//
// Drift bounds the relative clock-rate error of any machine (1% by
// default, far above what NTP allows); Margin covers scheduling jitter.
// The package never talks to the network or reads a clock.
package lease
