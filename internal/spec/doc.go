// Package spec turns a user's Workload document — YAML or JSON, apiVersion
// strata.dev/v1, kind Workload — into a validated, defaulted *api.Workload.
//
// Parse walks the YAML node tree itself rather than unmarshalling into
// structs, so that every problem can be reported at once, each with the full
// field path and line (spec.groups[0].tasks[1].resources.memory), as a
// *Errors that a CLI prints and a server returns as a JSON 400. Unknown
// fields are errors, never ignored, and name the field likely meant
// (internal/suggest; keys.go lists each mapping's fields). A size without a
// unit and a bare CPU of 100 or more are refused with both readings, since
// Nomad and Kubernetes users mean different things by them. Substitute fills
// a file's ${var.NAME} before it is parsed; ParseNamespace and
// ParseCellConfig read the other documents people write. What the document asks for but this
// version of Strata does not act on (the seed's predictive policies, time
// windows, NUMA hints) is accepted and listed in Workload.Unenforced, never
// silently dropped. The package owns the schema, its defaults and the
// priority classes (PriorityFor); docs/workload-spec.md is its manual. It
// must stay pure: no I/O, no clock, no state lookups — checks that need the
// cell (does a GPU model exist?) belong to the scheduler.
package spec
