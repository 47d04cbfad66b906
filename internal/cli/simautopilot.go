package cli

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
)

// newSimAutopilotCmds are the simulator's autoscaling subcommands: vertical
// sizing, horizontal scaling and GPU shares, each proved on a trace before
// it runs in a cell (docs/autoscaling.md).
func newSimAutopilotCmds(g *globals) []*cobra.Command {
	return []*cobra.Command{newSimVerticalCmd(g), newSimHorizontalCmd(g), newSimGPUShareCmd(g)}
}

// podSplit is --split K/N: keep the items whose FNV-1a hash of the id is K
// modulo N, a fixed partition to hold some out while designing.
type podSplit struct{ k, n uint32 }

func parseSplit(s string) (podSplit, error) {
	if s == "" {
		return podSplit{}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	k, err1 := strconv.ParseUint(a, 10, 32)
	n, err2 := strconv.ParseUint(b, 10, 32)
	if !ok || err1 != nil || err2 != nil || n < 2 || k >= n {
		return podSplit{}, failf("--split: want K/N with 0 ≤ K < N and N ≥ 2 (for example 1/2), got %q", s)
	}
	return podSplit{uint32(k), uint32(n)}, nil
}

func (s podSplit) keep(id string) bool {
	if s.n == 0 {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	return h.Sum32()%s.n == s.k
}

// simProgress is the progress shown on stderr by the autoscaling
// subcommands (--progress, as `strata sim`).
func simProgress(g *globals, style string) (*progressBar, error) {
	show, err := progressStyle(g.stderr, false, style)
	if err != nil {
		return nil, err
	}
	return newProgressBar(g.stderr, show), nil
}

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }
