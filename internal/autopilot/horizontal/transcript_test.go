package horizontal

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/autopilot/transcript"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the transcripts in testdata with what the code says now")

// TestTranscripts replays the stories in testdata/*.txt: each command is
// followed by "----" and the decision it must end with (regenerate with
// -rewrite, review as text). Commands, on one group, one decision a sync,
// every request served the moment it arrives:
//
//	new [risk=R] [forecast-only]      a new autoscaler, replicas 0..10, scale to zero
//	traffic HOURS PERIOD EXEC OFF...  HOURS of requests of EXEC s at the offsets of every PERIOD s
//	burst N EXEC                      N requests of EXEC s arrive now; one sync
//	quiet SECONDS                     no request for SECONDS
//	missing WHY                       one decision whose telemetry is missing
func TestTranscripts(t *testing.T) {
	for _, name := range []string{"testdata/explain.txt"} {
		t.Run(name, func(t *testing.T) {
			st := &story{}
			transcript.Run(t, name, *rewrite, func(cmd string) string { return st.run(t, cmd) })
		})
	}
}

type story struct {
	a    *Autoscaler
	now  int64
	reqs []request
}

func (s *story) run(t *testing.T, cmd string) string {
	f := strings.Fields(cmd)
	num := func(i int) int64 {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		return v
	}
	advance := func(seconds int64) Decision {
		d := replay(s.a, s.reqs, s.now, s.now+seconds)
		s.now += seconds
		return d
	}
	switch f[0] {
	case "new":
		cfg := DefaultConfig()
		cfg.Min, cfg.Max, cfg.ScaleToZero = 0, 10, true
		for _, kv := range f[1:] {
			switch k, v, _ := strings.Cut(kv, "="); k {
			case "risk":
				r, err := strconv.ParseFloat(v, 64)
				if err != nil {
					t.Fatalf("%q: %v", cmd, err)
				}
				cfg.Risk = r
			case "forecast-only":
				cfg.Mode = ModeForecastOnly
			default:
				t.Fatalf("%q: unknown %q", cmd, k)
			}
		}
		a, err := New(cfg)
		if err != nil {
			return err.Error()
		}
		*s = story{a: a}
		return fmt.Sprintf("replicas %d..%d, risk %v, %s", cfg.Min, cfg.Max, cfg.Risk, cfg.Mode)
	case "traffic":
		hours, period, exec := num(1), num(2), num(3)
		var offsets []int64
		for i := 4; i < len(f); i++ {
			offsets = append(offsets, num(i))
		}
		for _, r := range every(period, hours*3600, exec, offsets...) {
			s.reqs = append(s.reqs, request{s.now + r.at, r.exec})
		}
		return advance(hours * 3600).Reason
	case "burst":
		for k := int64(0); k < num(1); k++ {
			s.reqs = append(s.reqs, request{s.now, num(2)})
		}
		return advance(sync).Reason
	case "quiet":
		return advance(num(1)).Reason
	case "missing":
		d := s.a.Decide(Telemetry{Now: s.now, Ready: 2, Missing: strings.Join(f[1:], " ")})
		s.now += sync
		return d.Reason
	}
	t.Fatalf("unknown command %q", cmd)
	return ""
}
