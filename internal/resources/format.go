package resources

import (
	"strconv"
	"strings"
)

// formatUnits lists byte units from the largest down, binary before decimal
// at each magnitude, so FormatBytes picks the biggest unit that still shows
// the value exactly.
var formatUnits = []struct {
	name string
	size int64
}{
	{"PiB", PiB}, {"PB", PB}, {"TiB", TiB}, {"TB", TB}, {"GiB", GiB}, {"GB", GB},
	{"MiB", MiB}, {"MB", MB}, {"KiB", KiB}, {"KB", KB},
}

// FormatBytes renders a byte count in the largest unit that represents it
// exactly with at most three decimals on a mantissa below 1000 ("64MiB",
// "1.5GiB", "512MB", "1048577KiB"), falling back to plain bytes ("100B"). The output is exact, so ParseBytes(FormatBytes(x))
// == x for every x >= 0; negative values (deficits) get a leading '-'.
func FormatBytes(b int64) string {
	if b < 0 {
		return "-" + formatUnsigned(uint64(-(b+1))+1)
	}
	return formatUnsigned(uint64(b))
}

func formatUnsigned(b uint64) string {
	for _, u := range formatUnits {
		size := uint64(u.size)
		if b < size {
			continue
		}
		whole, rem := b/size, b%size
		// rem < 2^50, so rem*1000 cannot overflow. A fraction is only worth
		// showing on a short mantissa: "1073741.825KB" helps nobody.
		if rem != 0 && (whole >= 1000 || rem*1000%size != 0) {
			continue
		}
		return decimal(whole, rem*1000/size) + u.name
	}
	return strconv.FormatUint(b, 10) + "B"
}

// decimal formats whole plus thousandths, without trailing zeros.
func decimal(whole, thousandths uint64) string {
	s := strconv.FormatUint(whole, 10)
	if thousandths == 0 {
		return s
	}
	f := strconv.FormatUint(thousandths+1000, 10)[1:] // zero-padded to 3 digits
	return s + "." + strings.TrimRight(f, "0")
}

// FormatCPU renders millicores as whole cores when exact ("2"), otherwise
// in millicores ("500m", "1500m"). ParseCPU(FormatCPU(x)) == x for x >= 0.
func FormatCPU(milli int64) string {
	if milli != 0 && milli%1000 == 0 {
		return strconv.FormatInt(milli/1000, 10)
	}
	if milli == 0 {
		return "0"
	}
	return strconv.FormatInt(milli, 10) + "m"
}

// FormatBandwidth renders megabits per second in the largest exact unit
// ("100Mbps", "10Gbps", "1.5Gbps").
func FormatBandwidth(mbps int64) string {
	sign := ""
	u := uint64(mbps)
	if mbps < 0 {
		sign, u = "-", uint64(-(mbps+1))+1
	}
	switch {
	case u >= 1000000 && u%1000 == 0:
		return sign + decimal(u/1000000, u%1000000/1000) + "Tbps"
	case u >= 1000:
		return sign + decimal(u/1000, u%1000) + "Gbps"
	}
	return sign + strconv.FormatUint(u, 10) + "Mbps"
}
