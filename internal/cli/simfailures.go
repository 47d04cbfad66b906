package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/predict"
	"github.com/strata-dev/strata/internal/sim/failsim"
	"github.com/strata-dev/strata/internal/sim/trace"
)

// newSimFailuresCmd is `strata sim failures`: the failure model learned
// from one drive-stats file and judged on another, beside the naive SMART
// rule.
func newSimFailuresCmd(g *globals) *cobra.Command {
	var (
		trainPath, testPath, split, modelPath string
		cfg                                   = predict.DefaultTrain
		noWarm, quiet                         bool
	)
	cmd := &cobra.Command{
		Use:   "failures --train FILE --test FILE",
		Short: "Learn drive failures from one SMART file, score the model and the naive SMART rule on another",
		Long: `Train the failure model (internal/predict: gradient-boosted stumps on each drive's SMART
history and on where it stands among drives of its model) on one Backblaze drive-stats file
and judge it, beside the naive rule "SMART 5, 187, 197 or 198 raw > 0", on another holding
later days. One row per policy:

  recall             failed drives flagged on a day before their failure day / all failed drives
  falsePositiveRate  drives that never fail in the test file but are flagged on some day / all such drives
  leadDays           median days from a caught drive's first flag to its failure

The model flags a drive when its probability of failing within --horizon days reaches a
threshold chosen on the training file only: the lowest that flags at most --target-fpr of
the healthy training drives, judged on out-of-fold scores (5 folds by drive). The test file
is never looked at before it is scored. Readings of the training file from before the
test's first day are the drives' past when the test begins, as a cell keeps its drives'
histories (--no-warm-up starts the test with empty histories).

With --split DATE one file can be both: training takes its days before DATE, the test its
days from DATE on. docs/prediction.md describes the model and the figures.`,
		Example: `  strata sim failures --train ../shared/traces/failures/backblaze-2013-04-10..05-04.csv.gz \
      --test ../shared/traces/failures/backblaze-2013-04-10..05-04.csv.gz --split 2013-04-25 -o json
  strata sim failures --train early.csv.gz --test later.csv.gz --model model.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if trainPath == "" {
				return failf("--train: the drive-stats file to learn from is required")
			}
			if testPath == "" {
				if split == "" {
					return failf("--test: the drive-stats file to score is required (or --split DATE to split --train by time)")
				}
				testPath = trainPath
			}
			if g.output != "table" && g.output != "json" {
				return failf("--output: unknown format %q (want table or json)", g.output)
			}
			if !quiet {
				start := time.Now()
				cfg.Progress = func(stage string) {
					fmt.Fprintf(g.stderr, "[%5.1fs] %s\n", time.Since(start).Seconds(), stage)
				}
			}
			return interruptible(cmd.Context(), func() error {
				return runSimFailures(g, trainPath, testPath, split, modelPath, cfg, !noWarm)
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&trainPath, "train", "", "drive-stats CSV (plain or gzipped) to learn from")
	fl.StringVar(&testPath, "test", "", "drive-stats CSV of later days to score")
	fl.StringVar(&split, "split", "", "YYYY-MM-DD: train on the --train file's days before it, test on the --test file's days from it on")
	fl.IntVar(&cfg.Horizon, "horizon", cfg.Horizon, "days ahead the model learns to see a failure")
	fl.Float64Var(&cfg.TargetFPR, "target-fpr", cfg.TargetFPR, "share of healthy training drives the threshold may flag (out of fold)")
	fl.StringVar(&modelPath, "model", "", "write the trained model as JSON to this file")
	fl.BoolVar(&noWarm, "no-warm-up", false, "start the test with empty drive histories instead of the training file's past")
	fl.BoolVar(&quiet, "quiet", false, "no progress lines on stderr")
	fl.StringVarP(&g.output, "output", "o", "table", "output format: table or json (the rows)")
	return cmd
}

func runSimFailures(g *globals, trainPath, testPath, split, modelPath string, cfg predict.TrainConfig, warm bool) error {
	if cfg.Progress != nil {
		cfg.Progress("loading " + trainPath)
	}
	trainTable, err := trace.LoadBackblaze(trainPath, failsim.SmartAttrs)
	if err != nil {
		return failf("--train: %v", err)
	}
	testTable := trainTable
	if testPath != trainPath {
		if cfg.Progress != nil {
			cfg.Progress("loading " + testPath)
		}
		if testTable, err = trace.LoadBackblaze(testPath, failsim.SmartAttrs); err != nil {
			return failf("--test: %v", err)
		}
	}
	train, test := failsim.SmartSource(trainTable), failsim.SmartSource(testTable)
	if split != "" {
		day, err := trace.DayOf(split)
		if err != nil {
			return failf("--split: %v", err)
		}
		train, test = train.Until(day), test.From(day)
	}
	res, err := failsim.Drives(train, test, cfg, warm)
	if err != nil {
		return failf("%v", err)
	}
	if res.Test.Readings == 0 {
		return failf("--test: no readings to score (is --split after the file's last day?)")
	}
	if modelPath != "" {
		if err := writeFile(modelPath, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", " ")
			return enc.Encode(res.Model)
		}); err != nil {
			return err
		}
	}
	if g.output == "json" {
		return printJSON(g.stdout, res.Rows)
	}
	tr := &res.Train
	fmt.Fprintf(g.stdout, "train: %s..%s, %d drives, %d failures; threshold %.4g (out of fold: recall %.1f%%, healthy flagged %.2f%%)\n",
		trace.DateOf(tr.FirstDay), trace.DateOf(tr.LastDay), tr.Units, tr.Failures, tr.Threshold, 100*tr.OOFRecall, 100*tr.OOFFalsePos)
	fmt.Fprintf(g.stdout, "test:  %s..%s, %d drives, %d failures\n",
		trace.DateOf(res.Test.FirstDay), trace.DateOf(res.Test.LastDay), res.Test.Units, res.Test.Failures)
	tb := newTable(g.stdout, "POLICY", "RECALL", "CAUGHT", "HEALTHY FLAGGED", "FLAGGED", "LEAD DAYS (MEDIAN)")
	for _, r := range res.Rows {
		tb.row(r.Policy, fmt.Sprintf("%.1f%%", 100*r.Recall), fmt.Sprintf("%d/%d", r.Caught, r.Failed),
			fmt.Sprintf("%.2f%%", 100*r.FalsePositiveRate), fmt.Sprintf("%d/%d", r.Flagged, r.Healthy), fmt.Sprintf("%.1f", r.LeadDays))
	}
	return tb.flush()
}
