package anomaly

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 1, 5, 12, 0, 0, 0, time.UTC)

func at(i int) time.Time { return t0.Add(time.Duration(i) * sampleEvery) }

// feed observes xs from sample index from on, returning the verdicts.
func feed(d *Detector, from int, xs ...float64) []Verdict {
	out := make([]Verdict, len(xs))
	for i, x := range xs {
		out[i] = d.Observe(at(from+i), x)
	}
	return out
}

// noisy is n samples of a level with Gaussian noise.
func noisy(rng *rand.Rand, n int, mu, sigma float64) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = mu + sigma*rng.NormFloat64()
	}
	return xs
}

func TestDetectorWarmsUpBeforeJudging(t *testing.T) {
	d := NewDetector(Config{MinSamples: 10})
	for i, v := range feed(d, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1000) {
		if v.Alarm || v.Change != Steady {
			t.Fatalf("sample %d judged during warm-up: %+v", i, v)
		}
		if !v.Warming {
			t.Fatalf("sample %d not marked as warming", i)
		}
	}
	if v := d.Observe(at(10), 5); v.Warming {
		t.Fatal("still warming after MinSamples")
	}
}

// TestDetectorIgnoresSpikes: single spikes of any height never alarm; the
// clip makes each worth at most Clip−Drift.
func TestDetectorIgnoresSpikes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := NewDetector(Config{})
	feed(d, 0, noisy(rng, 200, 100, 5)...)
	for i := range 50 {
		xs := noisy(rng, 5, 100, 5)
		xs[0] = 1e9
		for _, v := range feed(d, 200+5*i, xs...) {
			if v.Change == Raised {
				t.Fatalf("a lone spike raised an alarm: %+v", v)
			}
		}
	}
}

// TestDetectorStory: a step up is raised within a few samples, its end is
// cleared, and a step that stays becomes the new normal after Relearn.
func TestDetectorStory(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	d := NewDetector(Config{Relearn: 40})
	feed(d, 0, noisy(rng, 150, 100, 5)...)
	raised := -1
	for i, v := range feed(d, 150, noisy(rng, 20, 130, 5)...) { // +6σ
		if v.Change == Raised {
			raised = i
			if !v.Alarm || !v.Since.Equal(at(150+i)) || v.Z < 3 || math.Abs(v.Baseline-100) > 3 {
				t.Fatalf("raised verdict %+v", v)
			}
			break
		}
	}
	if raised < 0 || raised > 3 {
		t.Fatalf("a 6σ step raised after %d samples, want within 3", raised)
	}
	cleared := false
	for _, v := range feed(d, 170, noisy(rng, 30, 100, 5)...) {
		cleared = cleared || v.Change == Cleared
	}
	if !cleared {
		t.Fatal("the alarm did not clear when the level came back")
	}
	changes := map[Change]int{}
	var last Verdict
	for _, v := range feed(d, 200, noisy(rng, 100, 160, 5)...) {
		changes[v.Change]++
		last = v
	}
	if changes[Raised] != 1 || changes[Relearned] != 1 || last.Alarm {
		t.Fatalf("a lasting step: changes %v, last %+v; want raised once, relearned once, no alarm at the end", changes, last)
	}
	if math.Abs(last.Baseline-160) > 5 {
		t.Fatalf("baseline %g after relearning, want about 160", last.Baseline)
	}
}

func TestDetectorIgnoresNaN(t *testing.T) {
	d := NewDetector(Config{MinSamples: 3})
	feed(d, 0, 1, 1, 1)
	if v := d.Observe(at(3), math.NaN()); v.Change != Steady || v.Alarm {
		t.Fatalf("NaN judged: %+v", v)
	}
	if d.baseline.len() != 3 {
		t.Fatalf("NaN learned: %d samples", d.baseline.len())
	}
}

// TestWatchWordsItsEvents: a watch over the control plane's signals says
// which signal, its value and its baseline, in the signal's units.
func TestWatchWordsItsEvents(t *testing.T) {
	w := NewWatch(ControlPlane()...)
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		if _, ok := w.Observe(RaftCommitLatency.Name, at(i), 0.004*math.Exp(0.2*rng.NormFloat64())); ok {
			t.Fatalf("event on the normal at sample %d", i)
		}
	}
	var raised Event
	for i := 200; i < 210 && raised.Message == ""; i++ {
		if e, ok := w.Observe(RaftCommitLatency.Name, at(i), 0.040); ok {
			raised = e
		}
	}
	if raised.Change != Raised || !strings.HasPrefix(raised.Message, "raft commit latency is anomalous: 40ms against a baseline of 3.9") {
		t.Fatalf("event %+v", raised)
	}
	if _, ok := w.Alarming()[RaftCommitLatency.Name]; !ok {
		t.Fatal("the raised signal is not listed as alarming")
	}
	if _, ok := w.Observe("no such signal", at(300), 1); ok {
		t.Fatal("an unknown signal raised an event")
	}
}
