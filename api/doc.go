// Package api holds Strata's public types — workloads, nodes, allocations,
// evaluations and plans — and the Go HTTP client that the CLI, the node agent
// and the tests use to talk to a server's /v1 API.
//
// The types here are plain data: they carry no behaviour beyond small, pure
// helpers (resource arithmetic, status predicates). Resource dimensions are
// described once, in Dimensions (dimensions.go): adding one is a field of
// Resources and an entry there. They must never import an
// internal package, so that external programs can depend on this package alone.
package api
