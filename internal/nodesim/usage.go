package nodesim

import "syscall"

// selfUsage is this process's CPU time (user and system, in seconds) and
// peak resident memory (bytes), from getrusage.
func selfUsage() (cpuSeconds float64, maxRSSBytes int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0
	}
	cpu := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
	return cpu, ru.Maxrss << 10 // Linux reports kilobytes
}
