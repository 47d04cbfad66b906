package predict

import (
	"fmt"
	"math"
)

// Signal is one health signal a unit reports.
type Signal uint8

// The signals. SMART attributes are their raw values; counters only grow
// while the unit lives (a reset shows as a fall and is read as no growth).
const (
	SmartReadErrorRate     Signal = iota // SMART 1 raw (vendor-specific; Seagate's is a composite counter)
	SmartReallocated                     // SMART 5: reallocated sectors
	SmartPowerOnHours                    // SMART 9: the drive's own clock of hours powered
	SmartReportedUncorrect               // SMART 187: reported uncorrectable errors
	SmartCommandTimeout                  // SMART 188
	SmartTemperature                     // SMART 194, °C
	SmartPending                         // SMART 197: sectors pending reallocation
	SmartOfflineUncorrect                // SMART 198: offline uncorrectable sectors
	SmartCRCErrors                       // SMART 199: interface CRC errors
	EDACCorrected                        // memory errors the ECC corrected (EDAC ce_count)
	EDACUncorrected                      // memory errors it could not (EDAC ue_count)
	MachineChecks                        // machine-check exceptions (MCE) logged
	KernelIOErrors                       // I/O errors in the kernel log
	TaskFailures                         // Strata: tasks on the node that exited with a failure
	OOMKills                             // Strata: tasks the kernel killed for memory
	TaskRestarts                         // Strata: task restarts on the node
	HeartbeatGaps                        // Strata: heartbeats the node missed
	PastDowns                            // Strata: times the node was declared down
	NumSignals
)

// signalInfo describes a signal: its name and how features read it.
type signalInfo struct {
	name string
	kind signalKind
}

type signalKind uint8

const (
	// counter: grows while the unit lives; level and growth both matter.
	counter signalKind = iota
	// gauge: a level that goes up and down (temperature).
	gauge
	// clock: SMART 9, hours powered: its rate says whether the unit runs.
	clock
	// churning: a vendor counter that changes at every read on a live
	// drive and whose level means nothing across vendors: only whether it
	// stopped changing is read.
	churning
)

var signals = [NumSignals]signalInfo{
	SmartReadErrorRate:     {"smart_1", churning},
	SmartReallocated:       {"smart_5", counter},
	SmartPowerOnHours:      {"smart_9", clock},
	SmartReportedUncorrect: {"smart_187", counter},
	SmartCommandTimeout:    {"smart_188", counter},
	SmartTemperature:       {"smart_194", gauge},
	SmartPending:           {"smart_197", counter},
	SmartOfflineUncorrect:  {"smart_198", counter},
	SmartCRCErrors:         {"smart_199", counter},
	EDACCorrected:          {"edac_ce", counter},
	EDACUncorrected:        {"edac_ue", counter},
	MachineChecks:          {"mce", counter},
	KernelIOErrors:         {"io_errors", counter},
	TaskFailures:           {"task_failures", counter},
	OOMKills:               {"oom_kills", counter},
	TaskRestarts:           {"task_restarts", counter},
	HeartbeatGaps:          {"heartbeat_gaps", counter},
	PastDowns:              {"past_downs", counter},
}

// String is the signal's name as features and models spell it.
func (s Signal) String() string {
	if s < NumSignals {
		return signals[s].name
	}
	return fmt.Sprintf("signal(%d)", uint8(s))
}

// SignalByName finds a signal by its name (smart_5, edac_ce, ...).
func SignalByName(name string) (Signal, bool) {
	for s := range NumSignals {
		if signals[s].name == name {
			return s, true
		}
	}
	return 0, false
}

// SmartSignal is the signal of SMART attribute id's raw value, if the
// package reads that attribute.
func SmartSignal(id int) (Signal, bool) {
	return SignalByName(fmt.Sprintf("smart_%d", id))
}

// Reading is what one unit reported on one day. Day is any day number the
// caller keeps consistent (days since an epoch); a signal is known only
// when Set was called for it.
type Reading struct {
	Day    int
	values [NumSignals]float64
	known  uint32
}

// Set records signal s with value v. A NaN or infinite v is ignored: it is
// not a measurement.
func (r *Reading) Set(s Signal, v float64) {
	if s >= NumSignals || math.IsNaN(v) || math.IsInf(v, 0) {
		return
	}
	r.values[s] = v
	r.known |= 1 << s
}

// Get returns signal s and whether it was reported.
func (r *Reading) Get(s Signal) (float64, bool) {
	if s >= NumSignals || r.known&(1<<s) == 0 {
		return 0, false
	}
	return r.values[s], true
}

// Known reports whether signal s was reported.
func (r *Reading) Known(s Signal) bool { return s < NumSignals && r.known&(1<<s) != 0 }
