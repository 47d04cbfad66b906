package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/sim/trace"
)

// newSimGrowCmd is `strata sim grow`: a larger trace part of the same
// format, for benchmarks at a scale the shared part does not have.
func newSimGrowCmd(g *globals) *cobra.Command {
	var (
		format string
		o      trace.GrowOptions
		out    string
	)
	cmd := &cobra.Command{
		Use:   "grow --format google -o OUT TASK_EVENTS",
		Short: "Build a larger task_events part from one: overlaid, time-shifted copies with their own job ids",
		Long: `Build a larger trace part of the same format from one part, to replay at a scale the
part does not reach (Google 2011 parts hold from tens of thousands to over a million events).

Copy k of the part (k = 0 .. copies-1; copy 0 is the part itself) is shifted k × --shift
seconds later and its job ids are moved by k × 10^12, so its tasks are new tasks with the
part's sizes, priorities, event mix and per-task event order. The copies are merged in
time order (ties: copy order, then the part's order) and cut at --events events. Every
other column is copied byte for byte. The same input and flags always give the same file;
OUT is gzipped when it ends in .gz.`,
		Example: `  strata sim grow --format google --copies 6 --shift 60 --events 450000 \
      -o /tmp/task_events-450k.csv.gz ../shared/traces/google2011/task_events-part-00001-of-00500.csv.gz`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "google" {
				return failf("--format: only google task_events can be grown, got %q", format)
			}
			if out == "" {
				return failf("--out/-o: the file to write is required")
			}
			if o.Copies < 1 {
				return failf("--copies: must be at least 1, got %d", o.Copies)
			}
			if o.ShiftSeconds < 0 {
				return failf("--shift: must not be negative, got %d", o.ShiftSeconds)
			}
			if o.MaxEvents < 0 {
				return failf("--events: must not be negative, got %d", o.MaxEvents)
			}
			n, err := trace.GrowGoogleTaskEventsFile(args[0], out, o)
			if err != nil {
				return failf("grow: %v", err)
			}
			fmt.Fprintf(g.stdout, "wrote %d events (%d copies, %d s apart) to %s\n", n, o.Copies, o.ShiftSeconds, out)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&format, "format", "google", "trace format (google task_events)")
	fl.IntVar(&o.Copies, "copies", 2, "copies of the part to overlay")
	fl.Int64Var(&o.ShiftSeconds, "shift", 60, "seconds between the copies' starts")
	fl.IntVar(&o.MaxEvents, "events", 0, "keep only the first N events in time order (0: all)")
	fl.StringVarP(&out, "out", "o", "", "file to write (gzipped if it ends in .gz)")
	return cmd
}
