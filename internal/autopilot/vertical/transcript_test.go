package vertical

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
// followed by "----" and the output it must give (regenerate with
// -rewrite, review as text). Commands, on one task, one sample a minute:
//
//	config minAllowed=X maxAllowed=Y  start a new task
//	samples N V                       N samples of V
//	burst N BASE TOP PERIOD           N samples of BASE with a one-minute TOP every PERIOD
//	oom                               a kill at the limit in force, at the next minute
//	recommend                         the recommendation for the next minute
func TestTranscripts(t *testing.T) {
	for _, name := range []string{"testdata/explain.txt"} {
		t.Run(name, func(t *testing.T) {
			var task *Task
			now := int64(0)
			transcript.Run(t, name, *rewrite, func(cmd string) string { return run(t, cmd, &task, &now) })
		})
	}
}

func run(t *testing.T, cmd string, task **Task, now *int64) string {
	f := strings.Fields(cmd)
	num := func(i int) float64 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		return v
	}
	observe := func(s Sample) {
		if err := (*task).Observe(s); err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		*now += 60
	}
	switch f[0] {
	case "config":
		var cfg Config
		for _, kv := range f[1:] {
			k, v, _ := strings.Cut(kv, "=")
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%q: %v", cmd, err)
			}
			switch k {
			case "minAllowed":
				cfg.MinAllowed = x
			case "maxAllowed":
				cfg.MaxAllowed = x
			default:
				t.Fatalf("%q: unknown key %q", cmd, k)
			}
		}
		var err error
		if *task, err = NewTask(cfg); err != nil {
			return "error: " + err.Error()
		}
		*now = 0
		return "ok"
	case "samples":
		for i := 0; i < int(num(1)); i++ {
			observe(Sample{Time: *now, Usage: num(2)})
		}
		return fmt.Sprintf("t=%dm", *now/60)
	case "burst":
		for i, v := range spiky(num(2), num(3), int(num(1)), int(num(4))) {
			_ = i
			observe(Sample{Time: *now, Usage: v})
		}
		return fmt.Sprintf("t=%dm", *now/60)
	case "oom":
		r := (*task).Recommend(*now)
		observe(Sample{Time: *now, Usage: r.Limit, OOMKilled: true, Limit: r.Limit})
		return fmt.Sprintf("killed at %.4g", r.Limit)
	case "recommend":
		r := (*task).Recommend(*now)
		return fmt.Sprintf("%s %.4g: %s", r.Model, r.Limit, r.Reason)
	}
	t.Fatalf("unknown command %q", cmd)
	return ""
}
