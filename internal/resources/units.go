package resources

import (
	"fmt"
	"strconv"

	"github.com/strata-dev/strata/api"
)

// Each api.Unit's quantity syntax: how a workload document writes it
// (Parse) and how the cell writes it back (Format; FormatLimit for the
// bounds in messages). A new unit of a new dimension is a case of each;
// TestEveryUnitParsesAndFormats holds every unit of api.Dimensions to it.

// Parse reads a quantity of unit u.
func Parse(u api.Unit, s string) (int64, error) {
	switch u {
	case api.UnitMilliCPU:
		return ParseCPU(s)
	case api.UnitBytes:
		return ParseBytes(s)
	case api.UnitMbps:
		return ParseBandwidth(s)
	case api.UnitCount:
		whole, milli, err := ParseGPU(s)
		if err == nil && milli != 0 {
			return 0, fmt.Errorf("quantity %.64q is not a whole number", s)
		}
		return whole, err
	case api.UnitMilliGPU:
		whole, milli, err := ParseGPU(s)
		if err == nil && whole != 0 {
			return 0, fmt.Errorf("quantity %.64q is not a share below one", s)
		}
		return milli, err
	}
	return 0, fmt.Errorf("no syntax for unit %d", u)
}

// ParseRequest reads a quantity of unit u as one task asks for it: Parse,
// refusing what a user likely meant otherwise (a bare byte count, an
// implausible number of cores; meant.go).
func ParseRequest(u api.Unit, s string) (int64, error) {
	switch u {
	case api.UnitMilliCPU:
		return ParseCPURequest(s)
	case api.UnitBytes:
		return ParseBytesWithUnit(s)
	}
	return Parse(u, s)
}

// Format writes v of unit u so that Parse reads it back (v >= 0).
func Format(u api.Unit, v int64) string {
	switch u {
	case api.UnitMilliCPU:
		return FormatCPU(v)
	case api.UnitBytes:
		return FormatBytes(v)
	case api.UnitMbps:
		return FormatBandwidth(v)
	case api.UnitMilliGPU:
		return FormatGPUShare(v)
	}
	return strconv.FormatInt(v, 10)
}

// FormatLimit writes v of unit u as bounds read in messages: "1000000
// cores", "1PiB", "4096".
func FormatLimit(u api.Unit, v int64) string {
	switch u {
	case api.UnitMilliCPU:
		return formatCores(v)
	case api.UnitMilliGPU:
		return strconv.FormatInt(v, 10)
	}
	return Format(u, v)
}

// FormatGPUShare writes thousandths of a GPU as a fraction: "0.5".
func FormatGPUShare(milli int64) string {
	if milli < 0 {
		return "-" + FormatGPUShare(-milli)
	}
	return decimal(uint64(milli/1000), uint64(milli%1000))
}

// formatCores writes a CPU bound the way users write it: 1000000 cores,
// 500m.
func formatCores(milli int64) string {
	switch {
	case milli == 1000:
		return "1 core"
	case milli != 0 && milli%1000 == 0:
		return strconv.FormatInt(milli/1000, 10) + " cores"
	}
	return FormatCPU(milli)
}
