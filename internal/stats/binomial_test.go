package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// binomialTailDirect sums the probabilities with exact binomial
// coefficients, for small n.
func binomialTailDirect(n, k int, p float64) float64 {
	sum := 0.0
	for i := k; i <= n; i++ {
		c := 1.0
		for j := 0; j < i; j++ {
			c = c * float64(n-j) / float64(j+1)
		}
		sum += c * math.Pow(p, float64(i)) * math.Pow(1-p, float64(n-i))
	}
	return sum
}

func TestBinomialTail(t *testing.T) {
	tests := []struct {
		name string
		n, k int
		p    float64
		want float64
	}{
		{"k zero is certain", 10, 0, 0.1, 1},
		{"more failures than samples", 3, 4, 0.5, 0},
		{"rate zero", 10, 1, 0, 0},
		{"rate one", 10, 10, 1, 1},
		{"all of a fair coin", 10, 10, 0.5, math.Pow(0.5, 10)},
		{"half or more of a fair coin", 10, 5, 0.5, binomialTailDirect(10, 5, 0.5)},
		{"rare failures", 20, 5, 0.01, binomialTailDirect(20, 5, 0.01)},
		{"at the mean", 60, 6, 0.1, binomialTailDirect(60, 6, 0.1)},
		{"far tail", 50, 40, 0.05, binomialTailDirect(50, 40, 0.05)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := BinomialTail(tt.n, tt.k, tt.p)
			if diff := math.Abs(got - tt.want); diff > 1e-9*math.Max(tt.want, 1e-300) && diff > 1e-15 {
				t.Fatalf("BinomialTail(%d, %d, %g) = %g, want %g", tt.n, tt.k, tt.p, got, tt.want)
			}
		})
	}
}

// TestBinomialTailLargeN: thousands of trials cost few terms and stay
// within (0, 1].
func TestBinomialTailLargeN(t *testing.T) {
	got := BinomialTail(100000, 150, 0.001)
	if got <= 0 || got > 1 {
		t.Fatalf("BinomialTail(1e5, 150, 0.001) = %g, want in (0, 1]", got)
	}
	// Mean 100, sd about 10: 150 is five sd out, about 1e-6.
	if got > 1e-4 || got < 1e-8 {
		t.Fatalf("BinomialTail(1e5, 150, 0.001) = %g, want about 1e-6", got)
	}
}

// TestLogBinomialTailBelowFloat: tails far below the smallest float64
// keep their order in log space.
func TestLogBinomialTailBelowFloat(t *testing.T) {
	a := LogBinomialTail(400, 400, 0.01) // 1e-800
	b := LogBinomialTail(400, 390, 0.01)
	if math.IsInf(a, 0) || math.IsInf(b, 0) || !(a < b) {
		t.Fatalf("ln tails %g, %g: want finite and the first smaller", a, b)
	}
	if want := 400 * math.Log(0.01); math.Abs(a-want) > 1e-9 {
		t.Fatalf("ln P(X ≥ 400 | 400, 0.01) = %g, want %g", a, want)
	}
}

func TestLogFisherCombine(t *testing.T) {
	tests := []struct {
		name string
		ps   []float64
		want float64
	}{
		{"none is no evidence", nil, 1},
		{"one is itself", []float64{0.03}, 0.03},
		{"two of 5 %", []float64{0.05, 0.05}, 0.05 * 0.05 * (1 - 2*math.Log(0.05))},
		{"ones are no evidence", []float64{1, 1, 1}, 1},
		{"three of 10 %", []float64{0.1, 0.1, 0.1}, chi2Survival(-2*3*math.Log(0.1), 6)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := make([]float64, len(tt.ps))
			for i, p := range tt.ps {
				logs[i] = math.Log(p)
			}
			got := math.Exp(LogFisherCombine(logs...))
			if math.Abs(got-tt.want) > 1e-12 {
				t.Fatalf("combined p = %g, want %g", got, tt.want)
			}
		})
	}
}

// chi2Survival is P(χ²_dof ≥ x) for even dof, summed directly.
func chi2Survival(x float64, dof int) float64 {
	sum, term := 0.0, 1.0
	for i := 0; i < dof/2; i++ {
		if i > 0 {
			term *= x / 2 / float64(i)
		}
		sum += term
	}
	return math.Exp(-x/2) * sum
}

func TestMedianMAD(t *testing.T) {
	xs := []float64{5, 1, 3, 2, 4, 1000}
	m, s := MedianMAD(xs)
	if m != 3.5 {
		t.Fatalf("median %g, want 3.5", m)
	}
	// Deviations 1.5 2.5 0.5 1.5 0.5 996.5: their median is 1.5.
	if math.Abs(s-1.4826*1.5) > 1e-12 {
		t.Fatalf("scale %g, want %g", s, 1.4826*1.5)
	}
	if xs[0] != 5 || xs[5] != 1000 {
		t.Fatal("MedianMAD reordered its argument")
	}
	if got := Median([]float64{3, 1, 2}); got != 2 {
		t.Fatalf("median of 3 1 2 = %g", got)
	}
	if m, s := MedianMAD(nil); !math.IsNaN(m) || !math.IsNaN(s) {
		t.Fatal("MedianMAD of nothing should be NaN")
	}
}

// TestPoissonDraw: the draws' mean and variance are the rate's, on both
// sides of the switch to the normal approximation.
func TestPoissonDraw(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, lambda := range []float64{0.3, 4, 29, 80} {
		const n = 20000
		sum, sq := 0.0, 0.0
		for range n {
			x := float64(PoissonDraw(rng, lambda))
			sum += x
			sq += x * x
		}
		mean := sum / n
		variance := sq/n - mean*mean
		if math.Abs(mean-lambda) > 4*math.Sqrt(lambda/n) || math.Abs(variance-lambda) > 0.1*lambda {
			t.Errorf("rate %g: mean %g, variance %g", lambda, mean, variance)
		}
	}
}
