package trace

import (
	"cmp"
	"slices"
	"time"
)

// Ticket is one failure ticket of Alibaba's SSD failure data (FAST '21,
// alibaba-edu/dcbrain `ssd_open_data`): when a disk failed and where it
// sat. Time is seconds since 1970-01-01 UTC.
type Ticket struct {
	Time  int64  `json:"time"`
	Model string `json:"model"`
	App   string `json:"app"`
	Disk  string `json:"disk"`
	Node  string `json:"node"`
	Rack  string `json:"rack"`
	Room  string `json:"room"`
}

// LoadSSDTickets reads ssd_failure_tag_*.csv (plain or gzipped): the
// tickets in time order (ties in file order).
func LoadSSDTickets(path string) ([]Ticket, error) {
	t, closeFn, err := openTable(path, "failure_time", "disk_id", "node_id", "rack_id")
	if err != nil {
		return nil, err
	}
	defer closeFn()
	var out []Ticket
	for {
		ok, err := t.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if t.has("failure") && t.str("failure") == "0" {
			continue // not a failure
		}
		at, err := time.Parse(time.DateTime, t.str("failure_time"))
		if err != nil {
			return nil, t.errf("failure_time", "not a time YYYY-MM-DD hh:mm:ss: %q", t.str("failure_time"))
		}
		tk := Ticket{Time: at.Unix(), Model: t.str("model"), App: t.str("app"), Disk: t.str("disk_id"),
			Node: t.str("node_id"), Rack: t.str("rack_id"), Room: t.str("machine_room_id")}
		if tk.Node == "" {
			return nil, t.errf("node_id", "empty id")
		}
		if tk.Rack == "" {
			return nil, t.errf("rack_id", "empty id")
		}
		out = append(out, tk)
	}
	slices.SortStableFunc(out, func(a, b Ticket) int { return cmp.Compare(a.Time, b.Time) })
	return out, nil
}
