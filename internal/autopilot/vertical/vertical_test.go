package vertical

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// feed observes values one a minute from time 0 and returns the task.
func feed(t *testing.T, cfg Config, values ...float64) *Task {
	t.Helper()
	task, err := NewTask(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		if err := task.Observe(Sample{Time: int64(60 * i), Usage: v}); err != nil {
			t.Fatal(err)
		}
	}
	return task
}

// repeat returns n copies of v.
func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// join concatenates value lists.
func join(parts ...[]float64) []float64 {
	var out []float64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// spiky is n minutes at base with a one-minute jump to top every period.
func spiky(base, top float64, n, period int) []float64 {
	out := repeat(base, n)
	for i := period / 2; i < n; i += period {
		out[i] = top
	}
	return out
}

func ramp(from, to float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = from + (to-from)*float64(i)/float64(n-1)
	}
	return out
}

func TestRecommendModels(t *testing.T) {
	cases := []struct {
		name       string
		values     []float64
		wantModel  string
		minL, maxL float64
		reason     string
	}{
		{"flat task: its peak and a small margin", repeat(0.5, 300), ModelSteady, 0.505, 0.515, "steady: peak 0.5 over 2h0m0s + 2%"},
		{"fallen task: the old peak is forgotten after the steady window",
			join(repeat(0.9, 120), repeat(0.4, 200)), ModelSteady, 0.40, 0.42, "steady: peak 0.4"},
		{"ramping task: the rise allowance keeps it ahead of the ramp",
			ramp(0.2, 0.8, 120), ModelSteady, 0.8 * 1.02, 0.83, "of the largest 3m0s rise"},
		{"bursty task: sized on the day's peak with a margin",
			spiky(0.05, 0.1, 600, 30), ModelBursty, 0.2, 0.24, "bursty (usage jumps by 50% of its peak"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			task := feed(t, Config{}, c.values...)
			r := task.Recommend(int64(60 * len(c.values)))
			if !r.Ready || r.Model != c.wantModel || r.Limit < c.minL || r.Limit > c.maxL || !strings.Contains(r.Reason, c.reason) {
				t.Fatalf("got %s %.4f (%s), want %s in [%.3f, %.3f] with %q", r.Model, r.Limit, r.Reason, c.wantModel, c.minL, c.maxL, c.reason)
			}
		})
	}
}

func TestWarmingUpSaysWhatIsMissing(t *testing.T) {
	task := feed(t, Config{}, repeat(0.3, 10)...)
	r := task.Recommend(600)
	if r.Ready || r.Model != ModelWarmingUp || !strings.Contains(r.Reason, "9m0s of the 20m0s") {
		t.Fatalf("got %+v, want not ready and how much history is missing", r)
	}
}

func TestOOMRaisesAtOnceAndDoesNotLoop(t *testing.T) {
	task := feed(t, Config{}, repeat(0.5, 60)...)
	before := task.Recommend(3600).Limit
	// Killed at the limit in force: the next recommendation is 20 % above it.
	if err := task.Observe(Sample{Time: 3600, Usage: 0.5, OOMKilled: true, Limit: before}); err != nil {
		t.Fatal(err)
	}
	after := task.Recommend(3660)
	if after.Model != ModelAfterOOM || math.Abs(after.Limit-before*1.2) > 1e-9 || after.OOMs != 1 {
		t.Fatalf("after a kill at %.4f got %s %.4f (%d kills), want after-oom %.4f", before, after.Model, after.Limit, after.OOMs, before*1.2)
	}
	// Usage stays low for a day: the limit never falls back to where it killed.
	for i := 1; i <= 1440; i++ {
		if err := task.Observe(Sample{Time: 3600 + int64(60*i), Usage: 0.3}); err != nil {
			t.Fatal(err)
		}
		if r := task.Recommend(3600 + int64(60*(i+1))); r.Limit < before*1.2 {
			t.Fatalf("minute %d: limit %.4f fell below the floor %.4f the kill raised", i, r.Limit, before*1.2)
		}
	}
	// A second kill within the week doubles the bump.
	second := task.Recommend(90000).Limit
	if err := task.Observe(Sample{Time: 90000, Usage: 0.3, OOMKilled: true, Limit: second}); err != nil {
		t.Fatal(err)
	}
	if r := task.Recommend(90060); math.Abs(r.Limit-second*1.4) > 1e-9 {
		t.Fatalf("second kill at %.4f: got %.4f, want the bump doubled to 40%%: %.4f", second, r.Limit, second*1.4)
	}
}

func TestKilledAtMaxAllowedIsReportedNotResized(t *testing.T) {
	task := feed(t, Config{MaxAllowed: 0.6}, repeat(0.59, 60)...)
	r := task.Recommend(3600)
	if r.Limit != 0.6 || r.Bound != BoundMax {
		t.Fatalf("got %.4f bound %q, want held at maxAllowed 0.6", r.Limit, r.Bound)
	}
	for k := 0; k < 3; k++ {
		now := int64(3600 + 60*k)
		if err := task.Observe(Sample{Time: now, Usage: 0.6, OOMKilled: true, Limit: 0.6}); err != nil {
			t.Fatal(err)
		}
		r = task.Recommend(now + 60)
		if r.Limit != 0.6 {
			t.Fatalf("kill %d at maxAllowed: limit %.4f, want it left at 0.6", k+1, r.Limit)
		}
	}
	if r.KilledAtMax != 3 || !strings.Contains(r.Reason, "killed 3 time(s) at maxAllowed: not resized again") {
		t.Fatalf("got %d kills at max, reason %q; want 3 reported", r.KilledAtMax, r.Reason)
	}
}

func TestMinAllowedRaises(t *testing.T) {
	r := feed(t, Config{MinAllowed: 0.25}, repeat(0.1, 60)...).Recommend(3600)
	if r.Limit != 0.25 || r.Bound != BoundMin || !strings.Contains(r.Reason, "raised to minAllowed") {
		t.Fatalf("got %.4f %q (%s), want minAllowed 0.25", r.Limit, r.Bound, r.Reason)
	}
}

func TestObserveRejects(t *testing.T) {
	task := feed(t, Config{}, 0.1, 0.2)
	if err := task.Observe(Sample{Time: 0, Usage: 0.1}); !errors.Is(err, ErrOutOfOrder) {
		t.Errorf("a sample older than the latest: %v, want ErrOutOfOrder", err)
	}
	if err := task.Observe(Sample{Time: 600, Usage: math.NaN()}); err == nil || !strings.Contains(err.Error(), "usage") {
		t.Errorf("NaN usage: %v, want an error naming usage", err)
	}
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"bounds contradict", Config{MinAllowed: 2, MaxAllowed: 1}, "minAllowed: 2 is above maxAllowed 1"},
		{"negative bound", Config{MaxAllowed: -1}, "maxAllowed: must be a finite number"},
		{"negative margin", Config{Margin: -0.1}, "margin"},
		{"span over window", Config{RiseSpan: 24 * time.Hour, RiseWindow: time.Hour}, "riseSpan"},
		{"sub-second window", Config{SteadyWindow: time.Millisecond}, "steadyWindow"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewTask(c.cfg)
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want ErrConfig naming %q", err, c.want)
			}
		})
	}
	if _, err := NewTask(Config{}); err != nil {
		t.Fatalf("defaults: %v", err)
	}
}

func TestWindowExtreme(t *testing.T) {
	// 10 minutes in 100 s buckets: the window holds the samples of the
	// bucket now is in and of the five before it.
	w := newWindowMax(600, 6)
	w.add(0, 5)
	w.add(150, 3)
	w.add(450, 4)
	cases := []struct {
		at   int64
		want float64
		ok   bool
	}{{460, 5, true}, {599, 5, true}, {600, 4, true}, {999, 4, true}, {1000, 0, false}}
	for _, c := range cases {
		if got, ok := w.get(c.at); ok != c.ok || (ok && got != c.want) {
			t.Errorf("max at %d = %v, %v; want %v, %v", c.at, got, ok, c.want, c.ok)
		}
	}
	m := newWindowMin(600, 6)
	m.add(0, 5)
	m.add(150, 3)
	if got, _ := m.get(200); got != 3 {
		t.Errorf("min = %v, want 3", got)
	}
}

func TestMemoryIsFixed(t *testing.T) {
	task := feed(t, Config{}, repeat(0.4, 10)...)
	size := func() int {
		return len(task.steady.index) + len(task.long.index) + len(task.recentMin.index) + len(task.rises.index) + len(task.burst.index)
	}
	before := size()
	for i := 100; i < 100_000; i++ {
		if err := task.Observe(Sample{Time: int64(10 * i), Usage: 0.4 + 0.1*math.Sin(float64(i))}); err != nil {
			t.Fatal(err)
		}
	}
	if after := size(); after != before || before != steadyBuckets+longBuckets+spanBuckets+riseBuckets+burstBuckets {
		t.Fatalf("buckets %d then %d, want a fixed %d", before, after, steadyBuckets+longBuckets+spanBuckets+riseBuckets+burstBuckets)
	}
}
