package predict

// Observation is one unit's reading of one day in a stream.
type Observation struct {
	Unit string
	// Class is the kind of unit its peers are (a drive model, a node's
	// hardware class); "" when unknown (no peer features).
	Class   string
	Reading Reading
	// Failed says the unit failed on this day: its last reading (Backblaze's
	// failure column).
	Failed bool
}

// Source replays a stream of observations in day order (the units of one
// day in any order). Train and Evaluate call it more than once; every call
// must give the same stream. It returns the first error of the underlying
// data; yield returning false stops it early without an error.
type Source func(yield func(Observation) bool) error

// Until is the part of src before day (exclusive).
func (src Source) Until(day int) Source {
	return func(yield func(Observation) bool) error {
		return src(func(o Observation) bool {
			if o.Reading.Day >= day {
				return false
			}
			return yield(o)
		})
	}
}

// From is the part of src from day on.
func (src Source) From(day int) Source {
	return func(yield func(Observation) bool) error {
		return src(func(o Observation) bool {
			if o.Reading.Day < day {
				return true
			}
			return yield(o)
		})
	}
}

// streamFacts are what one pass over a stream learns before the others:
// the day each unit failed and the stream's last day.
type streamFacts struct {
	failDay  map[string]int
	first    int
	last     int
	units    int
	readings int
}

func scanFacts(src Source) (streamFacts, error) {
	f := streamFacts{failDay: map[string]int{}, first: -1, last: -1}
	seen := map[string]bool{}
	err := src(func(o Observation) bool {
		if f.first < 0 || o.Reading.Day < f.first {
			f.first = o.Reading.Day
		}
		f.last = max(f.last, o.Reading.Day)
		f.readings++
		if !seen[o.Unit] {
			seen[o.Unit] = true
			f.units++
		}
		if o.Failed {
			if d, ok := f.failDay[o.Unit]; !ok || o.Reading.Day < d {
				f.failDay[o.Unit] = o.Reading.Day
			}
		}
		return true
	})
	return f, err
}

// Span is what a stream covers.
type Span struct {
	FirstDay int `json:"firstDay"`
	LastDay  int `json:"lastDay"`
	Units    int `json:"units"`
	Readings int `json:"readings"`
	Failures int `json:"failures"`
}

// SpanOf reads src once and says what it covers (FirstDay and LastDay are
// -1 for an empty stream).
func SpanOf(src Source) (Span, error) {
	f, err := scanFacts(src)
	return Span{FirstDay: f.first, LastDay: f.last, Units: f.units, Readings: f.readings, Failures: len(f.failDay)}, err
}
