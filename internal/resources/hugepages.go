package resources

import (
	"fmt"

	"github.com/strata-dev/strata/api"
)

// Huge page sizes the cell schedules, in bytes: the two x86-64 sizes
// (docs/hardware.md says why others are refused).
var (
	HugePage2Mi = HugePages2Mi.Spec.PageSize
	HugePage1Gi = HugePages1Gi.Spec.PageSize
)

// HugePageDim is a page size the cell schedules and the bound of its
// dimension.
type HugePageDim struct {
	Size  int64
	Limit Limit
}

// HugePageDims lists the page sizes the cell schedules, smallest first:
// the dimensions of api.Dimensions written as huge pages.
var HugePageDims = func() []HugePageDim {
	var out []HugePageDim
	for _, l := range Limits {
		if l.Spec.Form == api.FormHugePages {
			out = append(out, HugePageDim{l.Spec.PageSize, l})
		}
	}
	return out
}()

// HugePages returns the dimension of r holding pages of size, or nil for
// a size the cell does not schedule.
func HugePages(r *api.Resources, size int64) *int64 {
	for _, d := range HugePageDims {
		if d.Size == size {
			return d.Limit.Ptr(r)
		}
	}
	return nil
}

// ParseHugePageSize parses a page size such as "2Mi" or "1Gi": a power of
// two that the cell schedules.
func ParseHugePageSize(s string) (int64, error) {
	size, err := ParseBytes(s)
	if err != nil {
		return 0, err
	}
	if size <= 0 || size&(size-1) != 0 {
		return 0, fmt.Errorf("page size must be a power of two, got %s", FormatBytes(size))
	}
	if HugePages(&api.Resources{}, size) == nil {
		return 0, fmt.Errorf("unsupported page size %s (want 2Mi or 1Gi)", FormatBytes(size))
	}
	return size, nil
}

// CheckHugePages returns why amount is not a valid request of pages of
// size, or "": it must be positive, a whole number of pages and within
// the dimension's limit.
func CheckHugePages(size, amount int64) string {
	switch {
	case amount <= 0:
		return fmt.Sprintf("must be greater than zero, got %s", FormatBytes(amount))
	case amount%size != 0:
		return fmt.Sprintf("must be a whole number of %s pages, got %s", FormatBytes(size), FormatBytes(amount))
	case amount > MaxHugePages:
		return fmt.Sprintf("must be at most %s, got %s", FormatBytes(MaxHugePages), FormatBytes(amount))
	}
	return ""
}
