package trace

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// SmartTable is a Backblaze-style drive-stats file in memory: one row per
// drive per day (`date, serial_number, model, capacity_bytes, failure`,
// then `smart_N_normalized, smart_N_raw` columns). Only the raw values of
// the attributes in Attrs are kept; a cell the file leaves empty is NaN
// (absent), never 0.
type SmartTable struct {
	// Attrs are the SMART attribute ids of the value columns, in order.
	Attrs  []int
	Serial []string // per drive
	Model  []string // per drive: the model of its first row
	Rows   []SmartRow
	// Values holds len(Attrs) raw values per row, row after row.
	Values []float64
}

// SmartRow is one drive-day. Day counts days since 1970-01-01 (UTC).
type SmartRow struct {
	Drive  int32
	Day    int32
	Failed bool // the drive failed on this day (its last row)
}

// Value is attribute k (index into Attrs) of row i, NaN when absent.
func (t *SmartTable) Value(i, k int) float64 { return t.Values[i*len(t.Attrs)+k] }

// ErrUnsorted: a drive-stats file whose dates go back (the loaders and the
// model read days in order).
var ErrUnsorted = errors.New("rows are not in date order")

// LoadBackblaze reads a drive-stats CSV (plain or gzipped) and keeps the
// raw values of the SMART attributes in attrs (those the file has).
func LoadBackblaze(path string, attrs []int) (*SmartTable, error) {
	t, closeFn, err := openTable(path, "date", "serial_number", "failure")
	if err != nil {
		return nil, err
	}
	defer closeFn()
	out := &SmartTable{}
	var cols []string
	for _, a := range attrs {
		if col := fmt.Sprintf("smart_%d_raw", a); t.has(col) {
			out.Attrs = append(out.Attrs, a)
			cols = append(cols, col)
		}
	}
	drives := map[string]int32{}
	lastDay := int32(math.MinInt32)
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		date, err := time.Parse(time.DateOnly, t.str("date"))
		if err != nil {
			return nil, t.errf("date", "not a date YYYY-MM-DD: %q", t.str("date"))
		}
		day := int32(date.Unix() / 86400)
		if day < lastDay {
			return nil, t.errf("date", "%w: %s after a later day", ErrUnsorted, t.str("date"))
		}
		lastDay = day
		serial := t.str("serial_number")
		if serial == "" {
			return nil, t.errf("serial_number", "empty serial number")
		}
		id, known := drives[serial]
		if !known {
			id = int32(len(out.Serial))
			drives[serial] = id
			out.Serial = append(out.Serial, serial)
			out.Model = append(out.Model, t.str("model"))
		}
		failed := false
		switch t.str("failure") {
		case "0", "":
		case "1":
			failed = true
		default:
			return nil, t.errf("failure", "want 0 or 1, got %q", t.str("failure"))
		}
		out.Rows = append(out.Rows, SmartRow{Drive: id, Day: day, Failed: failed})
		for _, col := range cols {
			v := math.NaN()
			if s := t.str(col); s != "" {
				if v, err = strconv.ParseFloat(s, 64); err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, t.errf(col, "not a number: %q", s)
				}
			}
			out.Values = append(out.Values, v)
		}
	}
	return out, nil
}

// DayOf is the day number of a date YYYY-MM-DD, as SmartRow.Day counts.
func DayOf(date string) (int, error) {
	d, err := time.Parse(time.DateOnly, strings.TrimSpace(date))
	if err != nil {
		return 0, fmt.Errorf("not a date YYYY-MM-DD: %q", date)
	}
	return int(d.Unix() / 86400), nil
}

// DateOf is the date of day number day.
func DateOf(day int) string { return time.Unix(int64(day)*86400, 0).UTC().Format(time.DateOnly) }

// openTable opens a CSV file with a header (plain or gzipped) and checks
// that it has the columns required.
func openTable(path string, required ...string) (*table, func() error, error) {
	r, closeFn, err := openMaybeGzip(path)
	if err != nil {
		return nil, nil, err
	}
	t, err := newTable(path, r)
	if err == nil {
		err = t.require(required...)
	}
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	return t, closeFn, nil
}
