package resources

import (
	"fmt"
	"math/big"
	"strings"
)

// maxQuantityLen bounds the text we hand to math/big, so hostile input cannot
// make parsing slow; no real quantity is anywhere near this long.
const maxQuantityLen = 64

// Binary and decimal byte units.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
	PiB int64 = 1 << 50

	KB int64 = 1e3
	MB int64 = 1e6
	GB int64 = 1e9
	TB int64 = 1e12
	PB int64 = 1e15
)

// byteUnits maps every accepted byte suffix to its multiplier. Suffixes are
// case-sensitive except for kilo, because "m" would otherwise be read as mega
// by some users and milli by others; "k" is unambiguous.
var byteUnits = map[string]int64{
	"": 1, "B": 1,
	"Ki": KiB, "KiB": KiB, "Mi": MiB, "MiB": MiB, "Gi": GiB, "GiB": GiB, "Ti": TiB, "TiB": TiB, "Pi": PiB, "PiB": PiB,
	"K": KB, "KB": KB, "k": KB, "kB": KB,
	"M": MB, "MB": MB, "G": GB, "GB": GB, "T": TB, "TB": TB, "P": PB, "PB": PB,
}

// bandwidthUnits maps lower-cased bandwidth suffixes to a multiplier and a
// divisor into megabits per second. Only bit suffixes are accepted: a bare
// "G" or "GB" would leave the user guessing between bits and bytes.
var bandwidthUnits = map[string][2]int64{
	"":     {1, 1},
	"kbps": {1, 1000}, "kbit": {1, 1000},
	"mbps": {1, 1}, "mbit": {1, 1},
	"gbps": {1000, 1}, "gbit": {1000, 1},
	"tbps": {1000000, 1}, "tbit": {1000000, 1},
}

// ParseCPU parses a CPU quantity into millicores: "500m" is 500, "2" and
// "0.5" are cores (2000, 500).
func ParseCPU(s string) (int64, error) {
	num, unit, err := split(s)
	if err != nil {
		return 0, err
	}
	switch unit {
	case "m":
		return scale(s, num, 1, 1)
	case "":
		return scale(s, num, 1000, 1)
	}
	return 0, fmt.Errorf("unknown unit %q in cpu quantity %.64q (want a number of cores, or millicores with m)", unit, s)
}

// ParseBytes parses a byte quantity: a bare number of bytes, or a number with
// a binary (Ki, Mi, Gi, Ti) or decimal (K, M, G, T) suffix, each optionally
// followed by B.
func ParseBytes(s string) (int64, error) {
	num, unit, err := split(s)
	if err != nil {
		return 0, err
	}
	mul, ok := byteUnits[unit]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q in byte quantity %.64q (want Ki, Mi, Gi, Ti, Pi, K, M, G, T or P, optionally followed by B)", unit, s)
	}
	return scale(s, num, mul, 1)
}

// ParseBandwidth parses a network bandwidth into megabits per second:
// "100Mbps", "10Gbps", "1Gbit", "500Kbps"; a bare number is Mbps. Units are
// case-insensitive.
func ParseBandwidth(s string) (int64, error) {
	num, unit, err := split(s)
	if err != nil {
		return 0, err
	}
	u, ok := bandwidthUnits[strings.ToLower(unit)]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q in bandwidth %.64q (want Kbps, Mbps, Gbps or Tbps; a bare number is Mbps)", unit, s)
	}
	return scale(s, num, u[0], u[1])
}

// ParseGPU parses a GPU request: a whole number of GPUs ("1", "4"), or a
// fraction below one ("0.5") meaning a share of a single GPU in thousandths.
// Exactly one of whole and milli is non-zero unless the request is zero.
func ParseGPU(s string) (whole, milli int64, err error) {
	num, unit, err := split(s)
	if err != nil {
		return 0, 0, err
	}
	if unit != "" {
		return 0, 0, fmt.Errorf("unknown unit %q in gpu quantity %.64q (want a number of GPUs such as 1 or 0.5)", unit, s)
	}
	m, err := scale(s, num, 1000, 1)
	if err != nil {
		return 0, 0, err
	}
	switch {
	case m%1000 == 0:
		return m / 1000, 0, nil
	case m < 1000:
		return 0, m, nil
	}
	// A share spanning several devices (1.5 GPUs) has no meaning to the
	// device plugins we target: a task gets whole GPUs or part of one.
	return 0, 0, fmt.Errorf("gpu quantity %.64q is fractional and above 1: ask for whole GPUs, or for a share of one GPU below 1", s)
}

// split separates a quantity into its decimal number and its unit suffix,
// rejecting empty, negative and non-numeric input.
func split(s string) (num, unit string, err error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return "", "", fmt.Errorf("empty quantity")
	}
	if len(t) > maxQuantityLen {
		return "", "", fmt.Errorf("unparseable quantity %.64q: longer than %d characters", s, maxQuantityLen)
	}
	negative := false
	if t[0] == '-' {
		negative = true
		t = t[1:]
	}
	i, digits, dots := 0, 0, 0
	for ; i < len(t); i++ {
		c := t[i]
		if c >= '0' && c <= '9' {
			digits++
		} else if c == '.' && dots == 0 {
			dots++
		} else {
			break
		}
	}
	if digits == 0 {
		return "", "", fmt.Errorf("unparseable quantity %.64q", s)
	}
	if negative {
		return "", "", fmt.Errorf("negative quantity %.64q", s)
	}
	return t[:i], t[i:], nil
}

// scale returns ceil(num * mul / div) for a non-negative decimal num, or an
// error naming the original quantity s when the result overflows int64.
func scale(s, num string, mul, div int64) (int64, error) {
	intPart, frac, _ := strings.Cut(num, ".")
	n, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return 0, fmt.Errorf("unparseable quantity %.64q", s)
	}
	den := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(len(frac))), nil)
	den.Mul(den, big.NewInt(div))
	n.Mul(n, big.NewInt(mul))
	q, r := n.QuoRem(n, den, new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		return 0, fmt.Errorf("quantity %.64q is too large", s)
	}
	return q.Int64(), nil
}
