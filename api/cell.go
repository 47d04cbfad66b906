package api

import (
	"fmt"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // windows name IANA zones; hosts without zoneinfo must agree too
)

// CellConfig is the cell-wide configuration, replicated like any other
// state: every server schedules with the same one.
type CellConfig struct {
	// SchedulingPolicy is the policy of workloads that name none; binpack
	// when empty.
	SchedulingPolicy string `json:"schedulingPolicy,omitempty"`
	// TimeWindows are the named windows that prefer and avoid rules may be
	// restricted to, e.g. a power zone's peak hours.
	TimeWindows []TimeWindow `json:"timeWindows,omitempty"`
	// Limits bound what the cell holds (docs/limits.md); nil: the
	// defaults.
	Limits *CellLimits `json:"limits,omitempty"`

	ModifyIndex uint64 `json:"modifyIndex"`
}

// CellLimits bound the workloads a cell stores and the replicas its
// running workloads want, in all and in each namespace (a namespace's
// quota may set its own); a registration past one is refused. A zero
// field takes its default.
type CellLimits struct {
	Workloads int64 `json:"workloads,omitempty"`
	Replicas  int64 `json:"replicas,omitempty"`
	// NamespaceWorkloads and NamespaceReplicas bound each namespace
	// whose quota sets none; zero: the cell's bounds.
	NamespaceWorkloads int64 `json:"namespaceWorkloads,omitempty"`
	NamespaceReplicas  int64 `json:"namespaceReplicas,omitempty"`
}

// The cell's default bounds (docs/limits.md): about 0.6 GB of a server's
// memory in workloads (28 KB each, as measured), and as many replicas as
// a server holds placed allocations of in about 0.5 GB (2 KB each).
const (
	DefaultCellWorkloads = 20000
	DefaultCellReplicas  = 250000
)

// Effective is l with every zero field at its default.
func (l *CellLimits) Effective() CellLimits {
	var out CellLimits
	if l != nil {
		out = *l
	}
	if out.Workloads <= 0 {
		out.Workloads = DefaultCellWorkloads
	}
	if out.Replicas <= 0 {
		out.Replicas = DefaultCellReplicas
	}
	if out.NamespaceWorkloads <= 0 {
		out.NamespaceWorkloads = out.Workloads
	}
	if out.NamespaceReplicas <= 0 {
		out.NamespaceReplicas = out.Replicas
	}
	return out
}

// Window returns the named window, or nil.
func (c *CellConfig) Window(name string) *TimeWindow {
	if c == nil {
		return nil
	}
	for i := range c.TimeWindows {
		if c.TimeWindows[i].Name == name {
			return &c.TimeWindows[i]
		}
	}
	return nil
}

// WindowNames lists the windows' names in order.
func (c *CellConfig) WindowNames() []string {
	if c == nil {
		return nil
	}
	names := make([]string, len(c.TimeWindows))
	for i, w := range c.TimeWindows {
		names[i] = w.Name
	}
	return names
}

// TimeWindow is a recurring daily window, e.g. weekdays 09:00–18:00 in
// Europe/Berlin. A window whose End is before its Start wraps past
// midnight (22:00–06:00) and then belongs to the day it starts on; one
// whose End equals its Start lasts the whole day.
type TimeWindow struct {
	Name     string   `json:"name"`
	Days     []string `json:"days,omitempty"` // mon … sun; empty means every day
	Start    string   `json:"start"`          // HH:MM, inclusive
	End      string   `json:"end"`            // HH:MM, exclusive
	TimeZone string   `json:"timeZone,omitempty"`
}

// Weekdays are the accepted day names, in time.Weekday order.
var Weekdays = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}

// ParseClock reads "HH:MM" (two digits each) as minutes after midnight.
func ParseClock(s string) (int, error) {
	digit := func(i int) (int, bool) { return int(s[i] - '0'), s[i] >= '0' && s[i] <= '9' }
	if len(s) != 5 || s[2] != ':' {
		return 0, fmt.Errorf("want HH:MM, got %q", s)
	}
	h1, ok1 := digit(0)
	h2, ok2 := digit(1)
	m1, ok3 := digit(3)
	m2, ok4 := digit(4)
	h, m := h1*10+h2, m1*10+m2
	if !ok1 || !ok2 || !ok3 || !ok4 || h > 23 || m > 59 {
		return 0, fmt.Errorf("want HH:MM between 00:00 and 23:59, got %q", s)
	}
	return h*60 + m, nil
}

// Active reports whether t falls inside the window. The window must be
// valid (see Validate); an invalid one is never active.
func (w *TimeWindow) Active(t time.Time) bool {
	start, err1 := ParseClock(w.Start)
	end, err2 := ParseClock(w.End)
	loc, err3 := w.location()
	if err1 != nil || err2 != nil || err3 != nil {
		return false
	}
	t = t.In(loc)
	minute := t.Hour()*60 + t.Minute()
	day := t.Weekday()
	switch {
	case end == start:
		return w.onDay(day)
	case end > start:
		return minute >= start && minute < end && w.onDay(day)
	}
	// Wraps past midnight: the part before midnight belongs to today, the
	// part after it to yesterday's window.
	if minute >= start {
		return w.onDay(day)
	}
	return minute < end && w.onDay((day+6)%7)
}

func (w *TimeWindow) onDay(d time.Weekday) bool {
	if len(w.Days) == 0 {
		return true
	}
	for _, name := range w.Days {
		if strings.EqualFold(name, Weekdays[d]) {
			return true
		}
	}
	return false
}

// locations caches loaded time zones: a window is checked on every
// evaluation, and loading reads the zone database each time. A zone's
// rules are immutable, so sharing them is safe.
var locations sync.Map // string → *time.Location

func (w *TimeWindow) location() (*time.Location, error) {
	switch w.TimeZone {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		// The server's own zone would make a plan depend on which server
		// leads.
		return nil, fmt.Errorf("the host's zone %q is not a fixed time zone", w.TimeZone)
	}
	if loc, ok := locations.Load(w.TimeZone); ok {
		return loc.(*time.Location), nil
	}
	loc, err := time.LoadLocation(w.TimeZone)
	if err != nil {
		return nil, err
	}
	locations.Store(w.TimeZone, loc)
	return loc, nil
}

// Validate checks the window and returns field problems keyed by the field
// name (name, days[1], start, ...), in field order.
func (w *TimeWindow) Validate() []FieldError {
	var errs []FieldError
	add := func(path, format string, args ...any) {
		errs = append(errs, FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
	}
	if w.Name == "" {
		add("name", "required")
	}
	for i, d := range w.Days {
		ok := false
		for _, known := range Weekdays {
			ok = ok || strings.EqualFold(d, known)
		}
		if !ok {
			add(fmt.Sprintf("days[%d]", i), "unknown day %q (want one of %s)", d, strings.Join(Weekdays, ", "))
		}
	}
	if _, err := ParseClock(w.Start); err != nil {
		add("start", "%s", err)
	}
	if _, err := ParseClock(w.End); err != nil {
		add("end", "%s", err)
	}
	if _, err := w.location(); err != nil {
		add("timeZone", "unknown time zone %q: want an IANA name such as Europe/Berlin, or UTC", w.TimeZone)
	}
	return errs
}
