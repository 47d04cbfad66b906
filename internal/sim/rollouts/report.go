package rollouts

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
)

// RunSeeds runs the scenarios of seeds [first, first+n) on workers
// goroutines, in seed order in the result; progress, when set, is called
// after each run with how many are done. It stops early, returning what
// finished, when ctx is cancelled.
func RunSeeds(ctx context.Context, first uint64, n, workers int, cfg Config, progress func(done int)) []Outcome {
	out := make([]Outcome, n)
	ran := make([]bool, n)
	next := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				o := Run(Generate(first+uint64(i)), cfg)
				mu.Lock()
				out[i], ran[i] = o, true
				done++
				if progress != nil {
					progress(done)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	var kept []Outcome
	for i, o := range out {
		if ran[i] {
			kept = append(kept, o)
		}
	}
	return kept
}

// FamilySummary is one family's figures.
type FamilySummary struct {
	Family Family `json:"family"`
	Runs   int    `json:"runs"`
	// Showed counts the runs whose bad version's fault showed (Showed).
	Showed int `json:"showed"`
	// HaltedShowed counts those of them halted.
	HaltedShowed int `json:"haltedShowed"`
	// Halted counts the runs the guard halted, DuringRollout those halted
	// before the rollout finished; HealthGate those the progress deadline
	// alone would have failed.
	Halted        int `json:"halted"`
	DuringRollout int `json:"duringRollout"`
	HealthGate    int `json:"healthGate"`
	// MedianReplaced is the median share of copies replaced when halted.
	MedianReplaced float64 `json:"medianReplaced"`
	// MedianHaltMinutes is the median time from the rollout's start to
	// the halt.
	MedianHaltMinutes float64 `json:"medianHaltMinutes"`
}

// Summary is the figures of a set of runs.
type Summary struct {
	Runs     int             `json:"runs"`
	Families []FamilySummary `json:"families"`
	// TruePositives are bad versions halted, FalsePositives good ones,
	// FalseNegatives bad ones not halted; BeforeFinish the bad ones halted
	// before their rollout finished.
	TruePositives, FalsePositives, FalseNegatives, BeforeFinish int
	Precision, Recall, RecallBeforeFinish                       float64
	// Showed counts the bad versions whose fault showed, HaltedShowed
	// those of them halted, RecallShowed their ratio: the recall on bad
	// versions one could tell from good ones.
	Showed, HaltedShowed int
	RecallShowed         float64
	// FalsePositivesWithNoise counts the good versions halted beside each
	// kind of noise, and GoodWithNoise the good versions that had it.
	FalsePositivesWithNoise map[Noise]int `json:"falsePositivesWithNoise"`
	GoodWithNoise           map[Noise]int `json:"goodWithNoise"`
}

// Summarize computes the figures of outcomes.
func Summarize(outcomes []Outcome) Summary {
	s := Summary{Runs: len(outcomes), FalsePositivesWithNoise: map[Noise]int{}, GoodWithNoise: map[Noise]int{}}
	for _, f := range Families {
		fs := FamilySummary{Family: f}
		var replaced, minutes []float64
		for _, o := range outcomes {
			if o.Family != f {
				continue
			}
			fs.Runs++
			if o.Showed() {
				fs.Showed++
				if o.Halted {
					fs.HaltedShowed++
				}
			}
			if o.HealthGateAfter > 0 {
				fs.HealthGate++
			}
			if o.Halted {
				fs.Halted++
				replaced = append(replaced, float64(o.Replaced)/float64(o.Replicas))
				minutes = append(minutes, o.HaltedAfter.Minutes())
				if o.DuringRollout {
					fs.DuringRollout++
				}
			}
		}
		fs.MedianReplaced, fs.MedianHaltMinutes = median(replaced), median(minutes)
		if fs.Runs > 0 {
			s.Families = append(s.Families, fs)
		}
	}
	for _, o := range outcomes {
		switch {
		case o.Bad && o.Halted:
			s.TruePositives++
			if o.Showed() {
				s.HaltedShowed++
			}
			if o.DuringRollout {
				s.BeforeFinish++
			}
		case o.Bad:
			s.FalseNegatives++
		case o.Halted:
			s.FalsePositives++
		}
		if o.Showed() {
			s.Showed++
		}
		if !o.Bad {
			for _, n := range uniqueNoise(o.Noise) {
				s.GoodWithNoise[n]++
				if o.Halted {
					s.FalsePositivesWithNoise[n]++
				}
			}
		}
	}
	s.Precision = ratio(s.TruePositives, s.TruePositives+s.FalsePositives)
	s.Recall = ratio(s.TruePositives, s.TruePositives+s.FalseNegatives)
	s.RecallBeforeFinish = ratio(s.BeforeFinish, s.TruePositives+s.FalseNegatives)
	s.RecallShowed = ratio(s.HaltedShowed, s.Showed)
	return s
}

// Showed reports whether a bad version's own fault showed: at least three
// times, on at least two nodes, while the run watched. One that never
// showed cannot be told from a good version by anything.
func (o Outcome) Showed() bool { return o.Bad && o.Faults >= 3 && o.FaultNodes >= 2 }

func uniqueNoise(ns []Noise) []Noise {
	out := slices.Clone(ns)
	slices.Sort(out)
	return slices.Compact(out)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// WriteTable writes the summary as the table of docs/benchmarks.md.
func (s Summary) WriteTable(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%d rollouts: precision %.1f %% (%d of %d halts), recall %.1f %% (%d of %d bad versions; %.1f %% before the rollout finished), recall on the bad versions whose fault showed %.1f %% (%d of %d)\n\n",
		s.Runs, 100*s.Precision, s.TruePositives, s.TruePositives+s.FalsePositives,
		100*s.Recall, s.TruePositives, s.TruePositives+s.FalseNegatives, 100*s.RecallBeforeFinish,
		100*s.RecallShowed, s.HaltedShowed, s.Showed)
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "| version | runs | halted | fault showed: halted | before the rollout finished | progress deadline alone | copies replaced at the halt (median) | halt after (median) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, f := range s.Families {
		showed := "—"
		if f.Family != Good {
			showed = fmt.Sprintf("%d of %d", f.HaltedShowed, f.Showed)
		}
		fmt.Fprintf(w, "| %s | %d | %d (%.1f %%) | %s | %d | %d | %.0f %% | %.1f min |\n", f.Family, f.Runs, f.Halted, 100*ratio(f.Halted, f.Runs),
			showed, f.DuringRollout, f.HealthGate, 100*f.MedianReplaced, f.MedianHaltMinutes)
	}
	fmt.Fprintln(w)
	for _, n := range []Noise{RackDown, RackNetwork, BadNode} {
		fmt.Fprintf(w, "good versions beside %s: %d, halted %d\n", n, s.GoodWithNoise[n], s.FalsePositivesWithNoise[n])
	}
	return nil
}
