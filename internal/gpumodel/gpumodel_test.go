package gpumodel

import (
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

const gib = int64(1) << 30

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, model string
		memory         int64
		want           bool
	}{
		{"A100", "NVIDIA A100-SXM4-80GB", 0, true},
		{"A100-80GB", "NVIDIA A100-SXM4-80GB", 0, true},
		{"A100-40GB", "NVIDIA A100-SXM4-80GB", 0, false},
		{"a100 80gb", "NVIDIA A100-SXM4-80GB", 0, true},
		{"A100-SXM4", "NVIDIA A100-SXM4-80GB", 0, true},
		{"A100-SXM4", "NVIDIA A100-PCIE-40GB", 0, false},
		{"A100-PCIE", "NVIDIA A100-PCIE-40GB", 0, true},
		{"H100", "NVIDIA H100 80GB HBM3", 0, true},
		{"H100-80GB", "NVIDIA H100 80GB HBM3", 0, true},
		{"H100-HBM3", "NVIDIA H100 80GB HBM3", 0, true},
		{"H100 PCIe", "NVIDIA H100 80GB HBM3", 0, false},
		{"A10", "NVIDIA A100-SXM4-80GB", 0, false},
		{"A100", "NVIDIA A10", 0, false},
		{"V100", "Tesla V100-SXM2-16GB", 0, true},
		{"nvidia v100", "Tesla V100-SXM2-16GB", 0, true},
		{"V100-32GB", "Tesla V100-SXM2-16GB", 0, false},
		{"T4", "Tesla T4", 0, true},
		{"T4", "NVIDIA T4", 0, true},
		{"MI250X", "AMD Instinct MI250X", 0, true},
		{"H100", "GH100", 0, true}, // alias: the chip's code name
		// memory from the fingerprint when the string names none
		{"H100-80GB", "NVIDIA H100 PCIe", 81559 << 20, true},
		{"H100-80GB", "NVIDIA H100 PCIe", 95830 << 20, false},
		{"T4-16GB", "Tesla T4", 15360 << 20, true},
		{"A100-40GB", "NVIDIA A100-PCIE", 0, false},
		{"A100-40GB", "NVIDIA A100-PCIE", 40 * gib, true},
		// the openb trace's names stay exact
		{"V100M16", "V100M16", 0, true},
		{"V100M16", "V100M32", 0, false},
		{"G2", "G3", 0, false},
		{"", "A100", 0, false},
	} {
		if got := Match(tc.pattern, tc.model, tc.memory); got != tc.want {
			t.Errorf("Match(%q, %q, %d) = %v, want %v", tc.pattern, tc.model, tc.memory, got, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	m := Parse("NVIDIA A100-SXM4-80GB")
	if m.Family != "a100" || m.MemoryGB != 80 || strings.Join(m.Words, ",") != "sxm4" {
		t.Fatalf("Parse = %+v", m)
	}
	if m := Parse("NVIDIA"); m.Family != "nvidia" {
		t.Fatalf("vendor only: %+v", m)
	}
}

func TestOverlap(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"A100", "A100-80GB", true},
		{"A100-80GB", "A100-SXM4", true},
		{"A100-80GB", "A100-40GB", false},
		{"A100", "H100", false},
		{"V100M16", "V100M16", true},
	} {
		if got := Overlap(tc.a, tc.b); got != tc.want {
			t.Errorf("Overlap(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

var (
	families = []string{"A100", "A10", "H100", "V100", "T4", "L40S", "MI250X", "B200"}
	forms    = []string{"", "SXM4", "PCIe", "HBM3", "NVL"}
	vendors  = []string{"", "NVIDIA", "Tesla", "AMD Instinct", "nvidia"}
	seps     = []string{"-", " ", "_"}
)

// model draws a fingerprint-like model string and its parts.
func model(t *rapid.T) (s, family, form string, mem int64) {
	family = rapid.SampledFrom(families).Draw(t, "family")
	form = rapid.SampledFrom(forms).Draw(t, "form")
	mem = rapid.SampledFrom([]int64{0, 16, 24, 40, 48, 80, 94}).Draw(t, "mem")
	sep := rapid.SampledFrom(seps).Draw(t, "sep")
	parts := []string{family}
	if form != "" {
		parts = append(parts, form)
	}
	if mem > 0 {
		parts = append(parts, itoa(mem)+"GB")
	}
	s = strings.Join(parts, sep)
	if v := rapid.SampledFrom(vendors).Draw(t, "vendor"); v != "" {
		s = v + " " + s
	}
	return s, family, form, mem
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestPropertyModelMatchesItself: every model string accepts itself, and
// a random case and a dropped vendor prefix change nothing.
func TestPropertyModelMatchesItself(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, family, form, mem := model(t)
		if !Match(s, s, 0) {
			t.Fatalf("%q does not match itself", s)
		}
		upper := rapid.Bool().Draw(t, "upper")
		p := family
		if form != "" {
			p += "-" + form
		}
		if mem > 0 {
			p += "-" + itoa(mem) + "gb"
		}
		if upper {
			p = strings.ToUpper(p)
		} else {
			p = strings.ToLower(p)
		}
		if !Match(p, s, 0) {
			t.Fatalf("%q does not match %q (case, vendor)", p, s)
		}
		if !Match("nvidia "+p, s, 0) {
			t.Fatalf("vendor prefix: %q does not match %q", "nvidia "+p, s)
		}
	})
}

// TestPropertyMemoryNarrows: a pattern with a memory size accepts a subset
// of what the pattern without it accepts, and never a model with another
// size.
func TestPropertyMemoryNarrows(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s, _, _, mem := model(t)
		pf := rapid.SampledFrom(families).Draw(t, "patternFamily")
		pm := rapid.SampledFrom([]int64{16, 40, 80}).Draw(t, "patternMem")
		narrow := pf + "-" + itoa(pm) + "GB"
		if Match(narrow, s, 0) && !Match(pf, s, 0) {
			t.Fatalf("%q matches %q but %q does not", narrow, s, pf)
		}
		if mem > 0 && mem != pm && Match(narrow, s, 0) {
			t.Fatalf("%q matches %q of %d GB", narrow, s, mem)
		}
		if Match(pf, s, 0) != (Parse(pf).Family == Parse(s).Family) {
			t.Fatalf("family rule broken: %q vs %q", pf, s)
		}
	})
}
