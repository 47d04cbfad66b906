package httpapi

import (
	"fmt"
	"slices"

	"github.com/strata-dev/strata/api"
)

// The checks of what agents send: a node's registration and allocation
// reports. An agent is a program, not a person, but a buggy or hostile one
// must not be able to store what the rest of the cell cannot handle
// (invariant 6): ids that become paths, capacities whose sums wrap, nil
// task states that crash a copy.

// Bounds of what one node may declare, beyond the resource limits.
const (
	maxNUMANodes  = 1024
	maxNodeCPUID  = 1 << 20 // CPU ids are small dense integers
	maxTextBytes  = 4096    // reasons, messages, GPU models and ids
	maxAddrBytes  = 512
	maxTaskSignal = 128
	// maxAgentNotices bounds the events one registration may add.
	maxAgentNotices = 64
)

// fieldErrors collects problems with field paths.
type fieldErrors []api.FieldError

func (f *fieldErrors) add(path, format string, args ...any) {
	*f = append(*f, api.FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
}

// check adds problem at path unless it is "".
func (f *fieldErrors) check(path, problem string) {
	if problem != "" {
		f.add(path, "%s", problem)
	}
}

// checkText refuses text a log line or a terminal could misread: NUL and
// other control bytes except tab and newline, and more than max bytes.
func checkText(s string, max int) string {
	if len(s) > max {
		return fmt.Sprintf("is %d bytes long, more than %d", len(s), max)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' || c == 0x7f {
			return fmt.Sprintf("must not contain control byte %#02x (at byte %d)", c, i)
		}
	}
	return ""
}

func oneOf(s string, choices []string) bool { return slices.Contains(choices, s) }
