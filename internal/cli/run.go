package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/spec"
)

// readSpecFile reads a document named by -f (- for stdin).
func readSpecFile(path string) ([]byte, error) {
	if path == "" {
		return nil, failf("-f/--file is required (a YAML file, or - for stdin)")
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
	var file workloadFile
	cmd := &cobra.Command{
		Use:   "validate [-f] FILE [--var NAME=VALUE]...",
		Short: "Check a Workload file offline; exit 1 listing every bad field",
		Example: `  strata validate -f examples/hello.yaml
  strata validate examples/ml-inference.yaml -o json
  strata validate web.yaml --var-file staging.vars.yaml`,
		Args: fileArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(g); err != nil {
				return err
			}
			doc, err := file.read(args)
			if err != nil {
				return err
			}
			wl, err := spec.Parse(doc)
			if err != nil {
				return invalidWorkload(file.name(), err)
			}
			if g.structured() {
				return g.printData(wl.Redacted()) // secret values are never printed
			}
			fmt.Fprintf(g.stdout, "%s: workload %q is valid (%d groups)\n", file.name(), wl.Name, len(wl.Groups))
			printNotices(g.stdout, wl.Unenforced)
			return nil
		},
	}
	file.register(cmd)
	addOutputFlag(cmd, g)
	return cmd
}

func newRunCmd(g *globals) *cobra.Command {
	var file workloadFile
	var wait bool
	var timeout, minHealthy time.Duration
	var checkIndex uint64
	cmd := &cobra.Command{
		Use:   "run [-f] FILE [--var NAME=VALUE]... [--wait] [--check-index N]",
		Short: "Create or update a workload",
		Long: `Create or update a workload from a YAML file. The file is validated locally
first, then by the server; nothing is written when either rejects it.

With --wait, strata run returns when every instance of the submitted version
is healthy (its readiness checks pass or, for tasks without checks, its tasks
run) and has stayed so for --min-healthy. Allocations of an earlier version
that the update replaces are not counted. It fails with the scheduler's
reasons when some instances cannot be placed, and with the task's reason when
an allocation of this version fails, crashes (even if restarted), is
OOM-killed or becomes unhealthy; and when --timeout passes first.

One file serves several environments through variables: ${var.NAME} in the
file is replaced by NAME's value from --var NAME=VALUE or a --var-file
(YAML, NAME: VALUE) before the file is read. A reference to a variable not
given is an error that names it; other ${...} (a task's ${HOME}) are left
alone, and $${var.NAME} writes ${var.NAME} itself.`,
		Example: `  strata run -f examples/hello.yaml --wait
  strata run examples/web.yaml --wait --timeout 2m --min-healthy 10s
  strata run web.yaml --var env=staging --var replicas=2
  strata run web.yaml --var-file prod.vars.yaml`,
		Args: fileArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			doc, err := file.read(args)
			if err != nil {
				return err
			}
			wl, err := spec.Parse(doc)
			if err != nil {
				return invalidWorkload(file.name(), err)
			}
			c := g.client()
			if wl.Namespace != "" && g.namespace == "" {
				c.Namespace = wl.Namespace // the spec's metadata.namespace, unless -n says otherwise (then the server refuses the mismatch)
			}
			register := c.RegisterWorkload
			if cmd.Flags().Changed("check-index") {
				register = func(ctx context.Context, doc []byte) (*api.RegisterResponse, error) {
					return c.RegisterWorkloadChecked(ctx, doc, checkIndex)
				}
			}
			resp, err := register(cmd.Context(), doc)
			if err != nil {
				return failf("submit %s: %v", file.name(), err)
			}
			fmt.Fprintf(g.stdout, "workload %q version %d submitted (evaluation %s)\n", resp.Name, resp.Version, shortID(resp.EvalID))
			printNotices(g.stdout, resp.Unenforced)
			if resp.DeploymentID != "" {
				fmt.Fprintf(g.stdout, "deployment %s rolls it out: strata deployment status %s --watch\n", shortID(resp.DeploymentID), shortID(resp.DeploymentID))
			}
			if !wait {
				return nil
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			return waitRunning(ctx, g, c, resp, minHealthy)
		},
	}
	file.register(cmd)
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until every instance of this version is healthy; fail with the reason otherwise")
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long --wait waits")
	cmd.Flags().DurationVar(&minHealthy, "min-healthy", DefaultMinHealthy, "with --wait: how long each instance must stay healthy before it counts")
	cmd.Flags().Uint64Var(&checkIndex, "check-index", 0, "register only if the workload is still at this index (from 'strata plan'; 0: it must not exist yet)")
	return cmd
}

// waitRunning follows the workload with blocking queries until every wanted
// instance of this version is healthy, or something says it will not be
// (judgeWait).
func waitRunning(ctx context.Context, g *globals, c *api.Client, reg *api.RegisterResponse, minHealthy time.Duration) error {
	var index uint64
	last := ""
	mem := &waitMemory{minHealthy: minHealthy}
	progress := startWaitProgress(g, fmt.Sprintf("workload %q version %d", reg.Name, reg.Version))
	defer progress.end()
	recheck := time.Time{}
	for {
		wait := 10 * time.Second
		if !recheck.IsZero() {
			wait = min(wait, max(time.Until(recheck), 10*time.Millisecond))
		}
		st, meta, err := c.WorkloadStatus(ctx, reg.Name, &api.Query{Index: index, Wait: wait})
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
		v := judgeWait(reg, st, allocs, time.Now(), mem)
		if v.fail != "" {
			return failf("%s", v.fail)
		}
		if v.progress != last {
			fmt.Fprintf(g.stdout, "  %s\n", v.progress)
			last = v.progress
			progress.set(last)
		}
		if v.done {
			fmt.Fprintf(g.stdout, "workload %q version %d is running and healthy\n", reg.Name, reg.Version)
			return nil
		}
		recheck = v.recheck
		if ctx.Err() != nil {
			return failf("timed out waiting for %q: %s", reg.Name, last)
		}
	}
}
