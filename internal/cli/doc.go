// Package cli implements the strata command line: the long-running commands
// (dev, server, agent) and the user commands that talk to a server over the
// /v1 API (run, validate, status, allocs, logs, stop, nodes). It owns flag
// parsing and output formatting only; every decision is made by the server,
// the agent or the packages they call.
package cli
