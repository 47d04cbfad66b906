package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/autopilot/horizontal"
	"github.com/strata-dev/strata/internal/sim/scaling"
	"github.com/strata-dev/strata/internal/sim/trace"
)

type simHorizontalFlags struct {
	requests     string
	startup      string
	min, max     int
	seed         int64
	sync         time.Duration
	until        string
	scoreFrom    string
	plotPath     string
	plotFrom     string
	scaleIn      time.Duration
	settle       time.Duration
	risk         float64
	spare        int
	active       float64
	forecastOnly bool
	hpaTarget    float64
	hpaWindow    time.Duration
	progress     string
}

func newSimHorizontalCmd(g *globals) *cobra.Command {
	var f simHorizontalFlags
	cmd := &cobra.Command{
		Use:   "horizontal --requests FILE --startup-latency FILE",
		Short: "Replay a request trace against Strata's forecasting autoscaler and the HPA rule",
		Long: `Replay a request trace (the GenAI trace's lora_request_trace.csv: gmt_create,
exec_time_seconds, …) against horizontal autoscalers and score them.

Every request keeps one replica busy for its execution time; requests no replica
can take wait in one FIFO queue; a replica added is ready after a start-up delay
drawn (seeded) from --startup-latency (basemodel_update_latency_anon.csv, in ms).
Every --sync each autoscaler sees what it could have measured so far (work in
flight, arrivals, busy time, the start-ups of its replicas) and sets the count.

Rows, one per policy: under-provisioned minutes (minutes in which a request
waited for a replica), replica-hours (starting replicas included), the wait's
p50/p99, scale-outs and scale-ins. AFTER IDLE (underProvisionedAfterIdle) counts the
under-provisioned minutes that follow 5 or more minutes without an arrival: cold
starts a forecast can see coming; the others fall inside traffic.
  strata    Strata's autoscaler (internal/autopilot/horizontal; docs/autoscaling.md):
            keeps the work in flight plus the fewest spares whose rise within a
            start-up time was exceeded in at most --risk of the past moments like
            now (work in flight, arrivals of the last minute and 15 minutes, the
            daily/weekly forecast level in 15-minute slots); learns both from what
            it has seen; scales to zero when no rise is expected; never scales in
            below the peak in flight of the last --scale-in-delay nor below a count
            decided within the last --settle.
  baseline  the Kubernetes HPA rule (its replica calculator, autoscaling/v2 default
            behaviour): 70 % busy target on the ready replicas, 10 % tolerance,
            starting replicas idle on a scale-up, at most ×2 (or +4) per sync, 300 s
            scale-down window; at zero replicas it activates one when work arrives.

--until drops requests from a time on (design on early days); --score-from
scores only from a time on while both still learn from everything before
(held-out later days). Times: 2024-11-27 or "2024-11-27 06:00" (UTC).`,
		Example: `  strata sim horizontal --requests ../shared/traces/genai/lora_request_trace.csv.gz \
      --startup-latency ../shared/traces/genai/basemodel_update_latency_anon.csv.gz
  strata sim horizontal --requests R.csv.gz --startup-latency L.csv.gz -o json
  strata sim horizontal --requests R.csv.gz --startup-latency L.csv.gz --score-from 2024-11-27
  strata sim horizontal --requests R.csv.gz --startup-latency L.csv.gz --plot week.png --plot-from 2024-11-24`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			ctx := cmd.Context()
			return interruptible(ctx, func() error { return runSimHorizontal(ctx, g, &f) })
		},
	}
	d := horizontal.DefaultConfig()
	fl := cmd.Flags()
	fl.StringVar(&f.requests, "requests", "", "request trace (lora_request_trace.csv format; plain or gzipped)")
	fl.StringVar(&f.startup, "startup-latency", "", "start-up latencies in ms (basemodel_update_latency_anon.csv format)")
	fl.IntVar(&f.min, "min", 0, "fewest replicas, for both policies (0 lets Strata scale to zero)")
	fl.IntVar(&f.max, "max", 20, "most replicas, for both policies")
	fl.Int64Var(&f.seed, "seed", 1, "seed of the start-up delay draws")
	fl.DurationVar(&f.sync, "sync", 15*time.Second, "time between decisions, for both policies")
	fl.StringVar(&f.until, "until", "", "drop requests from this time on (UTC)")
	fl.StringVar(&f.scoreFrom, "score-from", "", "score only from this time on (UTC); the autoscalers still learn from before")
	fl.StringVar(&f.plotPath, "plot", "", "write a PNG of work in flight against each policy's replicas over a week")
	fl.StringVar(&f.plotFrom, "plot-from", "", "first day of the plotted week (default: the last 7 days of the replay)")
	fl.Float64Var(&f.risk, "risk", d.Risk, "Strata: share of past moments like now whose rise within a start-up time may exceed the spares (lower: fewer waits, more replica-hours)")
	fl.DurationVar(&f.scaleIn, "scale-in-delay", d.ScaleInDelay, "Strata: never scale in below the peak in flight of this last span")
	fl.DurationVar(&f.settle, "settle", d.Settle, "Strata: never scale in below a count decided within this last span")
	fl.IntVar(&f.spare, "spare", d.Spare, "Strata: replicas the reactive rule keeps above the work in flight (what --forecast-only acts on)")
	fl.Float64Var(&f.active, "active-arrivals", d.ActiveArrivals, "Strata: forecast arrivals per 15-minute slot from which the slot is busy")
	fl.BoolVar(&f.forecastOnly, "forecast-only", false, "Strata: act on the reactive rule only and report what the forecast would have set")
	fl.Float64Var(&f.hpaTarget, "hpa-target", 0.7, "baseline: the HPA's busy target (to trace its own trade-off curve)")
	fl.DurationVar(&f.hpaWindow, "hpa-window", 300*time.Second, "baseline: the HPA's scale-down window")
	fl.StringVar(&f.progress, "progress", "auto", "progress on stderr: auto, bar, plain or none")
	addOutputFlag(cmd, g)
	return cmd
}

// parseUTC reads 2006-01-02 or "2006-01-02 15:04" as UTC seconds.
func parseUTC(flag, s string) (int64, error) {
	for _, layout := range []string{"2006-01-02", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02 15:04:05"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.Unix(), nil
		}
	}
	return 0, failf("%s: want a UTC time like 2024-11-27 or \"2024-11-27 06:00\", got %q", flag, s)
}

func runSimHorizontal(ctx context.Context, g *globals, f *simHorizontalFlags) error {
	if f.requests == "" || f.startup == "" {
		return failf("--requests and --startup-latency are both required (lora_request_trace.csv and basemodel_update_latency_anon.csv)")
	}
	if f.min < 0 || f.max < 1 || f.min > f.max {
		return failf("--min/--max: want 0 ≤ min ≤ max and max ≥ 1, got min %d max %d", f.min, f.max)
	}
	if !(f.hpaTarget > 0 && f.hpaTarget <= 1) || f.hpaWindow < 0 {
		return failf("--hpa-target: want a share in (0, 1] and --hpa-window ≥ 0, got %v and %v", f.hpaTarget, f.hpaWindow)
	}
	if f.sync < time.Second {
		return failf("--sync: want at least 1s, got %v", f.sync)
	}
	reqs, err := trace.LoadRequests(f.requests)
	if err != nil {
		return failf("--requests: %v", err)
	}
	lat, err := trace.LoadStartupLatencies(f.startup)
	if err != nil {
		return failf("--startup-latency: %v", err)
	}
	if f.until != "" {
		until, err := parseUTC("--until", f.until)
		if err != nil {
			return err
		}
		kept := reqs[:0]
		for _, r := range reqs {
			if r.Arrival < until {
				kept = append(kept, r)
			}
		}
		reqs = kept
	}
	if len(reqs) == 0 {
		return failf("--requests: no request to replay")
	}
	var scoreFrom int64
	if f.scoreFrom != "" {
		if scoreFrom, err = parseUTC("--score-from", f.scoreFrom); err != nil {
			return err
		}
		if scoreFrom > reqs[len(reqs)-1].Arrival {
			return failf("--score-from: %s is after the last request", f.scoreFrom)
		}
	}
	cfg := horizontal.DefaultConfig()
	cfg.Min, cfg.Max, cfg.ScaleToZero, cfg.Sync = f.min, f.max, f.min == 0, f.sync
	cfg.ScaleInDelay, cfg.Settle, cfg.Risk, cfg.Spare, cfg.ActiveArrivals = f.scaleIn, f.settle, f.risk, f.spare, f.active
	if f.forecastOnly {
		cfg.Mode = horizontal.ModeForecastOnly
	}
	strata, err := horizontal.New(cfg)
	if err != nil {
		return failf("%v", err)
	}
	bar, err := simProgress(g, f.progress)
	if err != nil {
		return err
	}
	var results []*scaling.Result
	hpa := scaling.NewHPA(f.min, f.max)
	hpa.Target, hpa.ScaleDownWindow = f.hpaTarget, int64(f.hpaWindow/time.Second)
	for _, s := range []scaling.Scaler{strata, hpa} {
		rc := scaling.Config{Requests: reqs, Startup: lat, Seed: f.seed, Sync: f.sync.Seconds(), Min: f.min, Max: f.max,
			ScoreFrom: scoreFrom, Progress: bar.func_(s.Name(), "syncs")}
		r, err := scaling.Replay(ctx, rc, s)
		bar.done()
		if err != nil {
			return failf("simulate %s: %v", s.Name(), err)
		}
		results = append(results, r)
	}
	if f.plotPath != "" {
		from := (reqs[len(reqs)-1].Arrival/86400 - 6) * 86400 // the last seven UTC days
		if f.plotFrom != "" {
			if from, err = parseUTC("--plot-from", f.plotFrom); err != nil {
				return err
			}
		}
		if err := writeFile(f.plotPath, func(w io.Writer) error { return scaling.WeekPlot(from, results...).WritePNG(w) }); err != nil {
			return err
		}
	}
	rows := make([]scaling.Row, len(results))
	for k, r := range results {
		rows[k] = r.Row
	}
	if g.structured() {
		return g.printData(rows)
	}
	span := fmt.Sprintf("%s to %s", time.Unix(reqs[0].Arrival, 0).UTC().Format("2006-01-02 15:04"),
		time.Unix(reqs[len(reqs)-1].Arrival, 0).UTC().Format("2006-01-02 15:04"))
	if scoreFrom > 0 {
		span += ", scored from " + time.Unix(scoreFrom, 0).UTC().Format("2006-01-02 15:04")
	}
	fmt.Fprintf(g.stdout, "horizontal scaling of %d requests (%s UTC), replicas %d..%d, sync %v\n", len(reqs), span, f.min, f.max, f.sync)
	tb := newTable(g.stdout, "POLICY", "UNDER-PROVISIONED MIN", "AFTER IDLE", "REPLICA-HOURS", "WAIT P50", "WAIT P99", "WAITED", "SCALE OUT/IN")
	for _, r := range rows {
		tb.row(r.Policy, fmt.Sprint(r.UnderProvisionedMinutes), fmt.Sprint(r.UnderProvisionedAfterIdle), fmt.Sprintf("%.1f", r.ReplicaHours), fmt.Sprintf("%.1fs", r.WaitP50),
			fmt.Sprintf("%.1fs", r.WaitP99), fmt.Sprintf("%d/%d", r.Waited, r.Requests), fmt.Sprintf("%d/%d", r.ScaleOuts, r.ScaleIns))
	}
	if err := tb.flush(); err != nil {
		return err
	}
	s, b := rows[0], rows[1]
	if b.UnderProvisionedMinutes > 0 && b.ReplicaHours > 0 {
		fmt.Fprintf(g.stdout, "\nstrata against the baseline: %.0f%% of its under-provisioned minutes at %.0f%% of its replica-hours\n",
			100*float64(s.UnderProvisionedMinutes)/float64(b.UnderProvisionedMinutes), 100*s.ReplicaHours/b.ReplicaHours)
	}
	fmt.Fprintf(g.stdout, "strata's decisions by source: %v\n", results[0].Sources)
	return nil
}
