package api

import (
	"slices"
	"strings"
	"testing"
)

// The table is checked at init against Resources: a table that no longer
// describes the struct, or an incomplete entry, stops the program before
// anything reads a dimension from the wrong field.
func TestDimensionsTableIsChecked(t *testing.T) {
	if err := checkDimensions(); err != nil {
		t.Fatalf("the table as it is: %v", err)
	}
	saved := Dimensions
	defer func() { Dimensions = saved }()
	broken := map[string]func([]Dimension) []Dimension{
		"an entry missing": func(ds []Dimension) []Dimension { return ds[:len(ds)-1] },
		"two entries swapped": func(ds []Dimension) []Dimension {
			ds[0], ds[1] = ds[1], ds[0]
			return ds
		},
		"a field renamed":     func(ds []Dimension) []Dimension { ds[2].Field = "disk"; return ds },
		"no noun":             func(ds []Dimension) []Dimension { ds[3].Noun = ""; return ds },
		"no bound":            func(ds []Dimension) []Dimension { ds[5].Max = 0; return ds },
		"a name twice":        func(ds []Dimension) []Dimension { ds[7].Name = ds[6].Name; return ds },
		"a share of nothing":  func(ds []Dimension) []Dimension { ds[4].Share.Of = "tpu"; return ds },
		"pages of no size":    func(ds []Dimension) []Dimension { ds[6].Spec.PageSize = 0; return ds },
		"a unit of no syntax": func(ds []Dimension) []Dimension { ds[0].Unit = 0; return ds },
	}
	for name, breakIt := range broken {
		Dimensions = breakIt(slices.Clone(saved))
		if err := checkDimensions(); err == nil || !strings.Contains(err.Error(), "api.Dimensions") {
			t.Errorf("%s: check = %v, want an error naming api.Dimensions", name, err)
		}
	}
}

// The table's loops are the arithmetic: every dimension adds, subtracts,
// is found negative and, when aggregate, exceeds a limit.
func TestArithmeticCoversEveryDimension(t *testing.T) {
	for k, d := range Dimensions {
		var one, two Resources
		*one.Of(k), *two.Of(k) = 1, 2
		if got := one.Add(one); got != two {
			t.Errorf("%s: 1+1 = %+v", d.Name, got)
		}
		if got := two.Sub(one); got != one {
			t.Errorf("%s: 2-1 = %+v", d.Name, got)
		}
		if got := (Resources{}).Sub(one).Negative(); got != d.Name {
			t.Errorf("%s: Negative of -1 = %q", d.Name, got)
		}
		want := ""
		if d.Fit == FitAggregate {
			want = d.Name
		}
		if got := two.Exceeds(one); got != want {
			t.Errorf("%s: 2 exceeds 1 = %q, want %q", d.Name, got, want)
		}
	}
}
