package resources

import "fmt"

// What a person meant: a bare number is read differently by the systems
// Strata's users come from. Nomad's `memory = 32` is 32 MB and its
// `cpu = 500` is 500 MHz; Kubernetes' `memory: 32` is 32 bytes and its
// `cpu: 500` is 500 cores. Taken as written, the first kills the task
// with an out-of-memory error at once and the second asks for a machine
// that does not exist. So a size must carry a unit, and a CPU request of
// many whole cores must say it means cores; the error asks which was
// meant, with both spellings ready to copy.

// ImplausibleCores is the least bare number of cores a task is taken to
// ask for by mistake: Strata's agents read a bare --cpu-total of 100 or
// more as millicores for the same reason.
const ImplausibleCores = 100

// ParseBytesWithUnit is ParseBytes for sizes people write (a task's memory
// and disk, a quota, a node's capacity): a number other than zero must
// have a unit.
func ParseBytesWithUnit(s string) (int64, error) {
	num, unit, err := split(s)
	if err != nil {
		return 0, err
	}
	n, err := ParseBytes(s)
	if err != nil || unit != "" || n == 0 {
		return n, err
	}
	return 0, fmt.Errorf("%s has no unit: write %sMi for %s MiB (how Nomad reads a bare number), or %s for %s bytes (how Kubernetes does)",
		num, num, num, FormatBytes(n), num)
}

// ParseCPURequest is ParseCPU for what one task asks for: a bare number of
// ImplausibleCores or more is refused, naming the millicores it likely
// stands for.
func ParseCPURequest(s string) (int64, error) {
	num, unit, err := split(s)
	if err != nil {
		return 0, err
	}
	m, err := ParseCPU(s)
	if err != nil || unit != "" || m < ImplausibleCores*1000 {
		return m, err
	}
	return 0, fmt.Errorf("%s would be %s cores: write %sm for %s millicores (Kubernetes' spelling; Nomad's cpu = %s is %s MHz, about that much), or %dm if you mean %s whole cores",
		num, num, num, num, num, num, m, num)
}
