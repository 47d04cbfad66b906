package failsim

import (
	"github.com/strata-dev/strata/internal/predict"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// SmartAttrs are the SMART attributes the failure model reads
// (predict.SmartSignal knows each).
var SmartAttrs = []int{1, 5, 9, 187, 188, 194, 197, 198, 199}

// SmartSource is t as a stream of readings, one per drive-day, in the
// table's (date) order.
func SmartSource(t *trace.SmartTable) predict.Source {
	sigs := make([]predict.Signal, len(t.Attrs))
	known := make([]bool, len(t.Attrs))
	for k, a := range t.Attrs {
		sigs[k], known[k] = predict.SmartSignal(a)
	}
	return func(yield func(predict.Observation) bool) error {
		for i, row := range t.Rows {
			o := predict.Observation{Unit: t.Serial[row.Drive], Class: t.Model[row.Drive], Failed: row.Failed}
			o.Reading.Day = int(row.Day)
			for k := range t.Attrs {
				if known[k] {
					o.Reading.Set(sigs[k], t.Value(i, k)) // NaN (absent) is not set
				}
			}
			if !yield(o) {
				return nil
			}
		}
		return nil
	}
}
