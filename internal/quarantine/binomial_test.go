package quarantine

import (
	"math"
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
			got := binomialTail(tt.n, tt.k, tt.p)
			if diff := math.Abs(got - tt.want); diff > 1e-9*math.Max(tt.want, 1e-300) && diff > 1e-15 {
				t.Fatalf("binomialTail(%d, %d, %g) = %g, want %g", tt.n, tt.k, tt.p, got, tt.want)
			}
		})
	}
}

// TestBinomialTailLargeN: a busy node (thousands of samples) costs few
// terms and stays within (0, 1].
func TestBinomialTailLargeN(t *testing.T) {
	got := binomialTail(100000, 150, 0.001)
	if got <= 0 || got > 1 {
		t.Fatalf("binomialTail(1e5, 150, 0.001) = %g, want in (0, 1]", got)
	}
	// Mean 100, sd about 10: 150 is five sd out, about 1e-6.
	if got > 1e-4 || got < 1e-8 {
		t.Fatalf("binomialTail(1e5, 150, 0.001) = %g, want about 1e-6", got)
	}
}
