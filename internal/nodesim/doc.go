// Package nodesim runs thousands of simulated node agents in one process,
// for scale tests of the control plane (`strata nodesim`).
//
// Each simulated node speaks the agents' real protocol through the same
// client functions the agent uses (api.Client: RegisterNodeTimed,
// NodeHeartbeat, NodeAllocations, UpdateAllocations), so a change of the
// protocol reaches nodesim too: it registers a node of a synthetic shape,
// heartbeats at the interval the server asks for, watches its allocations
// with blocking queries, runs them with the mock driver and reports them
// running, and stopped when the server says stop.
//
// What it keeps bounded: registrations go through one fixed pool of
// workers, heartbeats through another fed by one schedule (a heap of due
// times), never one timer goroutine per node; every node's requests share
// one HTTP transport. The pools are separate because real agents register
// independently of each other: a mass registration must not delay the
// heartbeats of the nodes already registered. What it does not bound: with watching on, every node
// holds one blocking query — one connection — as a real agent does, so the
// server sees the load of real agents; the server then needs
// --http-max-conns-per-client -1 and a file descriptor limit above the node
// count (docs/benchmarks.md). With watching off nodesim stays within
// Config.MaxConns connections.
//
// It never starts a process, writes a file or touches cgroups, and it
// never talks to anything but the servers it was given.
package nodesim
