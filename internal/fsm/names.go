package fsm

import (
	"sort"
	"strings"

	"github.com/strata-dev/strata/api"
)

// Qualified is a workload's identity as one string, "namespace/name" ('/'
// is in no name): the key of maps over workloads (the broker's, the
// drainer's, events').
func Qualified(ns, name string) string { return api.NamespaceOf(ns) + "/" + name }

func unqualified(q string) (ns, name string) {
	ns, name, _ = strings.Cut(q, "/")
	return ns, name
}

// ShortID is the first 8 characters of an id, as events name deployments.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
