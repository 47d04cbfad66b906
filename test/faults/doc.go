// Package faults holds Strata's fault scenarios: a real cell (three
// `strata server` processes and agents, each in its own network namespace
// of a faultnet network) takes a recorded load of workload writes and
// reads through the HTTP API while a scenario breaks it — SIGKILLs the
// leader, cuts it off from the majority, kills every server, wipes a
// follower's data dir, cuts an agent off, SIGSTOPs a server — and then the
// history is checked with porcupine (test/history): linearizable, and no
// acknowledged write lost.
//
// The package's own code is the cell (cell.go: how servers, agents and
// API clients are started, all in launch.go so that a change of flags or
// credentials is made once) and the load (load.go). The scenarios are its
// tests; each runs a short version in `go test ./...` (root with ip, nft
// and nsenter; skipped otherwise, with the reason) and a soak of at least
// 10,000 operations with STRATA_SOAK=1 (docs/reliability.md has the
// commands and the figures).
//
// It must never touch the machine's own network: every address lives in
// namespaces faultnet made, and the test process reaches them only through
// a client host's namespace.
package faults
