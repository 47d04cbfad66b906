// Package e2e holds Strata's end-to-end tests: they build the strata
// binary, start real cells (server and agent processes on free loopback
// ports, in temp dirs), submit workloads with the CLI and check real effects
// on this machine: processes, cgroup limits, logs, restarts, crash recovery.
//
// They need root (cgroups) and are skipped otherwise.
package e2e
