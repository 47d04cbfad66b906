// Package trace loads cluster traces into one compact in-memory model: a
// list of nodes, a list of pods and, for traces whose machines come and go,
// a list of node events. It understands the Alibaba openb GPU trace
// (cluster-trace-gpu-v2023: node lists and every pod-list variant), the
// Google cluster-usage trace 2011 (task_events and machine_events, plain or
// gzipped, or machines as a small CSV) and a native YAML/JSON format for
// hand-written scenarios.
//
// Loaders are pure functions of their input: they never consult the clock,
// the environment or a random source, and they map columns by header name,
// so a file whose columns are reordered still loads. Every parse error names
// the file, the line and the column it came from. This package must never
// import the simulator: the model here is plain data that the simulator,
// the CLI and the tests all read.
package trace
