package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/spec"
)

func readSpecFile(path string) ([]byte, error) {
	if path == "" {
		return nil, failf("-f/--file is required (a Workload YAML file, or - for stdin)")
	}
	if path == "-" {
		return io.ReadAll(os.Stdin)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, failf("-f: %v", err)
	}
	return b, nil
}

func printNotices(w io.Writer, notices []api.Notice) {
	for _, n := range notices {
		fmt.Fprintf(w, "  note: %s = %q: %s\n", n.Field, n.Value, n.Message)
	}
}

func newValidateCmd(g *globals) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "validate -f FILE",
		Short: "Check a Workload file offline; exit 1 listing every bad field",
		Example: `  strata validate -f examples/hello.yaml
  strata validate -f examples/ml-inference.yaml -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			doc, err := readSpecFile(file)
			if err != nil {
				return err
			}
			wl, err := spec.Parse(doc)
			if err != nil {
				return failf("%s is not a valid Workload:\n%v", file, err)
			}
			if g.json() {
				return printJSON(g.stdout, wl.Redacted()) // secret values are never printed
			}
			fmt.Fprintf(g.stdout, "%s: workload %q is valid (%d groups)\n", file, wl.Name, len(wl.Groups))
			printNotices(g.stdout, wl.Unenforced)
			return nil
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "Workload YAML file (- for stdin)")
	addOutputFlag(cmd, g)
	return cmd
}

func newRunCmd(g *globals) *cobra.Command {
	var file string
	var wait bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "run -f FILE [--wait]",
		Short: "Create or update a workload",
		Long: `Create or update a workload from a YAML file. The file is validated locally
first, then by the server; nothing is written when either rejects it.

With --wait, strata run returns when every instance runs, and fails with the
scheduler's reasons when some cannot be placed, or with the task's reason
when an allocation fails.`,
		Example: `  strata run -f examples/hello.yaml --wait`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			doc, err := readSpecFile(file)
			if err != nil {
				return err
			}
			if _, err := spec.Parse(doc); err != nil {
				return failf("%s is not a valid Workload:\n%v", file, err)
			}
			c := g.client()
			resp, err := c.RegisterWorkload(cmd.Context(), doc)
			if err != nil {
				return failf("submit %s: %v", file, err)
			}
			fmt.Fprintf(g.stdout, "workload %q version %d submitted (evaluation %s)\n", resp.Name, resp.Version, shortID(resp.EvalID))
			printNotices(g.stdout, resp.Unenforced)
			if !wait {
				return nil
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return waitRunning(ctx, g, c, resp)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "Workload YAML file (- for stdin)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until every instance runs; fail with the reason otherwise")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long --wait waits")
	return cmd
}

// waitRunning follows the workload with blocking queries until every wanted
// instance of this version runs, or something says it will not.
func waitRunning(ctx context.Context, g *globals, c *api.Client, reg *api.RegisterResponse) error {
	var index uint64
	last := ""
	for {
		st, meta, err := c.WorkloadStatus(ctx, reg.Name, &api.Query{Index: index, Wait: 10 * time.Second})
		if err != nil {
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return failf("timed out waiting for %q: last state: %s", reg.Name, last)
			}
			return failf("status of %q: %v", reg.Name, err)
		}
		index = meta.Index
		allocs, _, err := c.Allocations(ctx, reg.Name, nil)
		if err != nil {
			return failf("allocations of %q: %v", reg.Name, err)
		}
		desired, running := 0, 0
		for _, gs := range st.Groups {
			desired += gs.Desired
		}
		// Allocations whose spec did not change keep their old version
		// (a scale-up or a re-submit), so every running one counts; a
		// failure counts only for this version.
		for _, a := range allocs {
			if a.DesiredStatus != api.DesiredRun {
				continue
			}
			switch {
			case a.ClientStatus == api.AllocRunning:
				running++
			case a.ClientStatus == api.AllocFailed && a.WorkloadVersion == reg.Version:
				return failf("allocation %s (%s[%d]) on %s failed: %s", shortID(a.ID), a.Group, a.Index, a.NodeName, a.ClientReason)
			}
		}
		if e := st.LatestEval; e != nil && e.Status == api.EvalBlocked && e.CreateIndex >= reg.Index {
			var b strings.Builder
			for _, f := range e.Failures {
				fmt.Fprintf(&b, "\n  group %s: %d not placed: %s", f.Group, f.Missing, f.Summary)
			}
			return failf("%q cannot be fully placed:%s", reg.Name, b.String())
		}
		now := fmt.Sprintf("%d/%d running", running, desired)
		if now != last {
			fmt.Fprintf(g.stdout, "  %s\n", now)
			last = now
		}
		if desired == 0 {
			fmt.Fprintf(g.stdout, "workload %q wants no instances (stopped or 0 replicas)\n", reg.Name)
			return nil
		}
		evaluated := st.LatestEval != nil && st.LatestEval.CreateIndex >= reg.Index && st.LatestEval.Status == api.EvalComplete
		if evaluated && running >= desired {
			fmt.Fprintf(g.stdout, "workload %q is running\n", reg.Name)
			return nil
		}
		if ctx.Err() != nil {
			return failf("timed out waiting for %q: %s", reg.Name, last)
		}
	}
}
