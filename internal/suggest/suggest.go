package suggest

import (
	"fmt"
	"strings"
)

// synonyms maps words of Nomad and Kubernetes (lower-cased) to the names
// Strata uses for the same thing. A synonym is offered only where its
// target is a known name.
var synonyms = map[string][]string{
	"count":             {"replicas"},
	"instances":         {"replicas"},
	"task":              {"tasks"},
	"containers":        {"tasks"},
	"container":         {"tasks"},
	"taskgroups":        {"groups"},
	"group":             {"groups"},
	"args":              {"command"},
	"cmd":               {"command"},
	"entrypoint":        {"command"},
	"environment":       {"env"},
	"limits":            {"resources"},
	"requests":          {"resources"},
	"mem":               {"memory"},
	"memorymb":          {"memory"},
	"cores":             {"cpu"},
	"gpus":              {"gpu"},
	"restart":           {"restartPolicy"},
	"constraint":        {"placement"},
	"constraints":       {"placement"},
	"affinity":          {"placement"},
	"nodeselector":      {"placement"},
	"priorityclassname": {"priorityClass"},
	"priority":          {"priorityClass"},
	"namespace":         {"metadata"},
	"cpumilli":          {"cpu"},
	"memorybytes":       {"memory"},
	"gpumilli":          {"gpu"},
	"cputotal":          {"cpu-total"},
	"memorytotal":       {"memory-total"},
	"cpu":               {"cpuTotal", "cpu-total"},
	"memory":            {"memoryTotal", "memory-total"},
	"disk":              {"diskTotal", "disk-total"},
	"bandwidth":         {"bandwidthTotal", "bandwidth-total"},
	"datadir":           {"data-dir", "dataDir"},
	"bind":              {"http-addr", "httpAddr"},
	"retryjoin":         {"join"},
	"bootstrap":         {"bootstrap-expect", "bootstrapExpect"},
}

// Closest returns the known name got most likely stands for, or "" when
// none is close enough: the same name in another case, a known synonym,
// or the nearest name within a small edit distance (one edit for short
// names, two for longer ones, at most a third of the name). Ties go to the
// name listed first.
func Closest(got string, known []string) string {
	if got == "" || len(known) == 0 {
		return ""
	}
	lower := strings.ToLower(got)
	for _, k := range known {
		if k != got && strings.ToLower(k) == lower {
			return k
		}
	}
	for _, target := range synonyms[normalize(lower)] {
		for _, k := range known {
			if k == target && k != got {
				return k
			}
		}
	}
	limit := min(2, max(1, len([]rune(got))/3))
	best, bestDist := "", limit+1
	for _, k := range known {
		if k == got {
			continue
		}
		if d := distance(lower, strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// DidYouMean is Closest worded for the end of an error message:
// ` (did you mean "replicas"?)`, or "" when nothing is close.
func DidYouMean(got string, known []string) string {
	k := Closest(got, known)
	if k == "" {
		return ""
	}
	if strings.EqualFold(k, got) {
		return fmt.Sprintf(" (did you mean %q? names are case-sensitive)", k)
	}
	return fmt.Sprintf(" (did you mean %q?)", k)
}

// normalize drops the separators people put in compound names, so that
// "memory_mb", "memory-mb" and "memoryMB" all look up "memorymb".
func normalize(s string) string {
	return strings.NewReplacer("_", "", "-", "").Replace(s)
}

// distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and swaps of two neighbours each
// cost one ("comand" → "command" is 1, "repilcas" → "replicas" is 1).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
