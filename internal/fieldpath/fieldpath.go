// Package fieldpath spells the paths that errors use to name a field of a
// document or request: spec.groups[0].tasks[1].resources.memory,
// labels["strata.dev/team"]. Every validator of the project (the workload
// parser, the strict JSON decoder, the server's request checks) builds its
// paths here, so one field is always named the same way.
package fieldpath

import (
	"regexp"
	"strconv"
)

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// Join extends path with a mapping key. Keys that are not plain
// identifiers (label keys such as strata.dev/team, anything a user typed)
// are bracketed and quoted, so the path stays unambiguous and printable.
func Join(path, key string) string {
	if !plainKey.MatchString(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// Index extends path with a list index.
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
