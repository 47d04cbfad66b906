package api

import (
	"fmt"
	"strconv"
	"strings"
)

// PortRange is a node's own dynamic port range (Node.DynamicPorts), both
// ends included. Agents that share one machine's network (several agents
// on one host, as the end-to-end tests run them) give each a range of its
// own, so that two nodes never hand out the same port of one loopback.
type PortRange struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// String is the range as the agent's --dynamic-ports flag writes it.
func (r PortRange) String() string { return fmt.Sprintf("%d-%d", r.Min, r.Max) }

// Problem says what is wrong with the range, or "": both ends between 1
// and 65535, Min not above Max.
func (r PortRange) Problem() string {
	switch {
	case r.Min < 1 || r.Min > 65535:
		return fmt.Sprintf("min must be a port between 1 and 65535, got %d", r.Min)
	case r.Max < 1 || r.Max > 65535:
		return fmt.Sprintf("max must be a port between 1 and 65535, got %d", r.Max)
	case r.Min > r.Max:
		return fmt.Sprintf("min (%d) must not be above max (%d)", r.Min, r.Max)
	}
	return ""
}

// ParsePortRange reads "LO-HI" and checks it (Problem).
func ParsePortRange(s string) (PortRange, error) {
	lo, hi, ok := strings.Cut(strings.TrimSpace(s), "-")
	if !ok {
		return PortRange{}, fmt.Errorf("want LO-HI, e.g. 20000-20999, got %q", s)
	}
	var r PortRange
	var err error
	if r.Min, err = strconv.Atoi(lo); err != nil {
		return PortRange{}, fmt.Errorf("want LO-HI, e.g. 20000-20999, got %q", s)
	}
	if r.Max, err = strconv.Atoi(hi); err != nil {
		return PortRange{}, fmt.Errorf("want LO-HI, e.g. 20000-20999, got %q", s)
	}
	if p := r.Problem(); p != "" {
		return PortRange{}, fmt.Errorf("%s", p)
	}
	return r, nil
}

// DynamicPortRange is the range the scheduler draws the node's dynamic
// ports from: its own, or DynamicPortMin-DynamicPortMax.
func (n *Node) DynamicPortRange() PortRange {
	if n != nil && n.DynamicPorts != nil {
		return *n.DynamicPorts
	}
	return PortRange{Min: DynamicPortMin, Max: DynamicPortMax}
}
