// Package resources parses and formats the resource quantities users write in
// workload specs — CPU ("500m", "2"), bytes ("64Mi", "1.5GiB", "512M") and
// network bandwidth ("100Mbps", "10Gbps") — into the integer units of
// api.Resources (millicores, bytes, megabits per second), and back.
//
// Everything here is pure and exact: numbers are parsed as decimals with
// math/big, never through float64, so "1.5Gi" is exactly 1610612736 and a
// quantity that does not fit an int64 is an error rather than a wrapped
// value. A fraction finer than the target unit is rounded up (asking for a
// little more is safe; asking for less could let a task be starved). The
// package must never do I/O, log, or know about YAML: internal/spec owns
// field paths and turns these errors into field errors.
package resources
