// Package cli implements the strata command line: the long-running commands
// (dev, server, agent) and the user commands that talk to a server over the
// /v1 API (run, validate, status, allocs, logs, stop, nodes). It owns flag
// parsing and output formatting only; every decision is made by the server,
// the agent or the packages they call.
//
// Shared pieces, one each: output.go formats every listing (-o table,
// wide, json, yaml: printListing and its columns), watch.go is every
// --watch (blocking queries), progress.go says how far long commands are
// where stderr is not a terminal, configfile.go gives every daemon flag a
// key in --config, workloadfile.go reads a Workload file with its
// variables, completion.go completes what the cell holds, and
// agent_api.go adapts the API client to the agent (its default name, and
// stopping on a refused join token). Which node a name or id prefix means
// is internal/noderef's to say, on the server for every node command and
// here only to filter events by node.
package cli
