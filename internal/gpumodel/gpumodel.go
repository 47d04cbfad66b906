package gpumodel

import (
	"strconv"
	"strings"
)

// vendorWords are vendor and brand words that say nothing about which GPU
// it is: "NVIDIA Tesla V100" is a V100, "AMD Instinct MI250X" an MI250X.
var vendorWords = map[string]bool{
	"nvidia": true, "tesla": true, "geforce": true, "quadro": true,
	"amd": true, "radeon": true, "instinct": true, "intel": true,
}

// aliases maps other names of a family to the name Match compares: the
// chips' code names, which some fingerprinters report instead.
var aliases = map[string]string{
	"gv100": "v100",
	"ga100": "a100",
	"gh100": "h100",
	"ad102": "l40",
	"tu104": "t4",
}

// Model is a model string taken apart: its family, its memory size in
// GB when it names one (0 when not), and its other words.
type Model struct {
	Family   string
	MemoryGB int64
	Words    []string
}

// Parse takes a model string apart. Words are separated by spaces,
// hyphens, underscores or slashes and compared in lower case; vendor and
// brand words are dropped; the first remaining word is the family (after
// aliases); the first word of the form 80GB, 80G or 80GiB is the memory
// size. A string of vendor words only has the lower-cased string as its
// family, so every string parses to something that matches itself.
func Parse(s string) Model {
	fields := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return r == ' ' || r == '-' || r == '_' || r == '/' || r == '\t'
	})
	var m Model
	for _, f := range fields {
		if vendorWords[f] {
			continue
		}
		if m.Family == "" {
			if a, ok := aliases[f]; ok {
				f = a
			}
			m.Family = f
			continue
		}
		if gb, ok := memoryGB(f); ok && m.MemoryGB == 0 {
			m.MemoryGB = gb
			continue
		}
		m.Words = append(m.Words, f)
	}
	if m.Family == "" {
		m.Family = strings.Join(fields, " ")
	}
	return m
}

// memoryGB reads a memory word: 80gb, 80g, 80gib.
func memoryGB(w string) (int64, bool) {
	for _, suffix := range []string{"gib", "gb", "g"} {
		num, ok := strings.CutSuffix(w, suffix)
		if !ok || num == "" {
			continue
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n <= 0 || n > 1<<20 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// Match reports whether a GPU of model (with memoryBytes of memory, 0 when
// unknown) is what pattern asks for:
//
//   - the families are the same ("A100" never accepts an "A10");
//   - a memory size in the pattern must equal the model's, read from the
//     model string or, when the string names none, from memoryBytes
//     rounded to the nearest GB within 10% (cards report a little less
//     than they are sold as: an "80GB" H100 reports 79.6 GiB);
//   - every other word of the pattern appears among the model's words
//     ("A100-SXM4" does not accept an "A100-PCIE-40GB").
//
// A pattern accepts its own string, whatever the memory.
func Match(pattern, model string, memoryBytes int64) bool {
	if pattern == model {
		return true
	}
	p, m := Parse(pattern), Parse(model)
	if p.Family != m.Family {
		return false
	}
	if p.MemoryGB > 0 {
		switch {
		case m.MemoryGB > 0:
			if m.MemoryGB != p.MemoryGB {
				return false
			}
		case !memoryNear(p.MemoryGB, memoryBytes):
			return false
		}
	}
	for _, w := range p.Words {
		if !contains(m.Words, w) {
			return false
		}
	}
	return true
}

// memoryNear reports whether bytes is within 10% of gb gigabytes (either
// GiB or 10^9 bytes: vendors sell in both).
func memoryNear(gb, bytes int64) bool {
	if bytes <= 0 {
		return false
	}
	lo := float64(gb) * 1e9 * 0.9
	hi := float64(gb) * float64(1<<30) * 1.1
	return float64(bytes) >= lo && float64(bytes) <= hi
}

// AcceptsAny reports whether any of patterns accepts the model; an empty
// list accepts every model.
func AcceptsAny(patterns []string, model string, memoryBytes int64) bool {
	if len(patterns) == 0 {
		return true
	}
	for _, p := range patterns {
		if Match(p, model, memoryBytes) {
			return true
		}
	}
	return false
}

// Overlap reports whether some GPU could satisfy both patterns: the same
// family and no two different memory sizes ("A100-80GB" and "A100-SXM4"
// overlap in an "A100-SXM4-80GB"). Groups intersect their tasks' lists
// with it.
func Overlap(a, b string) bool {
	if a == b {
		return true
	}
	p, q := Parse(a), Parse(b)
	return p.Family == q.Family && (p.MemoryGB == 0 || q.MemoryGB == 0 || p.MemoryGB == q.MemoryGB)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
