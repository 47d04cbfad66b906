package spec

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/api"
)

func TestHugePagesAndMemoryTiers(t *testing.T) {
	w := mustParse(t, oneTask(cmd+"          resources: {memory: 64Mi, hugepages: {2Mi: 64Mi, 1Gi: 2Gi}, memoryTiers: [standard, slow]}\n"))
	tk := w.Groups[0].Tasks[0]
	if tk.Resources.HugePages2Mi != 64<<20 || tk.Resources.HugePages1Gi != 2<<30 {
		t.Errorf("hugepages = 2Mi %d, 1Gi %d; want 64Mi, 2Gi", tk.Resources.HugePages2Mi, tk.Resources.HugePages1Gi)
	}
	equal(t, "memory tiers", tk.MemoryTiers, []string{api.MemoryTierStandard, api.MemoryTierSlow})
}

func TestHardwareErrors(t *testing.T) {
	const res = "spec.groups[0].tasks[0].resources."
	for _, tc := range []struct {
		name, resources string
		wantPaths       []string
		wantMessage     string
	}{
		{"negative amount", "{hugepages: {2Mi: -64Mi}}", []string{res + `hugepages["2Mi"]`}, "negative"},
		{"zero amount", "{hugepages: {2Mi: 0}}", []string{res + `hugepages["2Mi"]`}, "greater than zero"},
		{"not whole pages", "{hugepages: {2Mi: 3Mi}}", []string{res + `hugepages["2Mi"]`}, "whole number of 2MiB pages"},
		{"page size not a power of two", "{hugepages: {3Mi: 6Mi}}", []string{res + `hugepages["3Mi"]`}, "power of two"},
		{"unsupported page size", "{hugepages: {4Mi: 8Mi}}", []string{res + `hugepages["4Mi"]`}, "unsupported page size"},
		{"page size not a quantity", "{hugepages: {big: 8Mi}}", []string{res + "hugepages.big"}, ""},
		{"hugepages not a mapping", "{hugepages: 64Mi}", []string{res + "hugepages"}, ""},
		{"unknown tier", "{memoryTiers: [fast]}", []string{res + "memoryTiers[0]"}, `unknown memory tier "fast"`},
		{"tier twice", "{memoryTiers: [slow, slow]}", []string{res + "memoryTiers[1]"}, "named twice"},
		{"no tiers", "{memoryTiers: []}", []string{res + "memoryTiers"}, "at least one tier"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(oneTask(cmd + "          resources: " + tc.resources + "\n")))
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("Parse = %v, want field errors at %q", err, tc.wantPaths)
			}
			if got := errs.Paths(); !slices.Equal(got, tc.wantPaths) {
				t.Fatalf("error paths = %q, want %q\n%v", got, tc.wantPaths, err)
			}
			if !strings.Contains(errs.List[0].Message, tc.wantMessage) {
				t.Errorf("message = %q, want it to contain %q", errs.List[0].Message, tc.wantMessage)
			}
		})
	}
}
