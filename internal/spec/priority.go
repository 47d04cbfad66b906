package spec

import "github.com/strata-dev/strata/api"

// DefaultPriorityClass is the class of a workload that names none.
const DefaultPriorityClass = api.PriorityBatch

// priorityBand is a class's base priority and the range an explicit
// spec.priority may refine it within. Bands do not overlap, so a batch
// workload can never outrank a production one by picking a large number;
// system (2000 and above) is for the cell's own per-node services.
type priorityBand struct{ base, min, max int }

var priorityBands = map[string]priorityBand{
	api.PriorityProduction: {base: 1000, min: 1000, max: 1999},
	api.PriorityBatch:      {base: 500, min: 500, max: 999},
	api.PriorityBestEffort: {base: 100, min: 0, max: 499},
	api.PrioritySystem:     {base: 2000, min: 2000, max: 2999},
}

// PriorityFor returns the base priority of a class: production 1000,
// batch 500, best-effort 100. The empty class is the default class (batch);
// an unknown class gets 0, so it never outranks anything.
func PriorityFor(class string) int {
	if class == "" {
		class = DefaultPriorityClass
	}
	return priorityBands[class].base
}

// PriorityRange returns the priorities a workload of class may ask for with
// spec.priority, and whether the class is known.
func PriorityRange(class string) (min, max int, ok bool) {
	b, ok := priorityBands[class]
	return b.min, b.max, ok
}
