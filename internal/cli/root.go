package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/pki"
)

// exitError carries an exit code through cobra without printing usage.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// failf returns an error that makes strata exit with code 1, printed as is.
// It wraps the first error among args even when the format prints it with
// %v, so that callers can still ask errors.Is (a lost quorum, say).
func failf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	if errors.Unwrap(err) == nil {
		for _, a := range args {
			if cause, ok := a.(error); ok {
				err = &causedError{msg: err.Error(), cause: cause}
				break
			}
		}
	}
	return &exitError{code: 1, err: err}
}

// causedError is a message that keeps the error it was made from.
type causedError struct {
	msg   string
	cause error
}

func (e *causedError) Error() string { return e.msg }
func (e *causedError) Unwrap() error { return e.cause }

// globals are the flags every client command shares.
type globals struct {
	addr  string
	token string
	// namespace is -n/--namespace: the namespace of every workload and
	// allocation command (default $STRATA_NAMESPACE, else "default").
	namespace string
	output    string
	stdout    io.Writer
	stderr    io.Writer
}

func (g *globals) client() *api.Client {
	c := api.NewClient(g.addr)
	if os.Getenv("STRATA_CACERT") == "" {
		// A dev cell started in this directory: its CA and CLI certificate.
		if f := pki.CertFiles(devTLSDir(devDataDir), pki.RoleCLI); fileExists(f.CA) {
			dc, err := api.NewClientWithTLS(g.addr, f.CA, f.Cert, f.Key)
			if err == nil {
				c = dc
			}
		}
	}
	if g.token != "" {
		c.Token = g.token
	}
	if g.namespace != "" {
		c.Namespace = g.namespace
	}
	if c.Token == "" {
		c.Token = devToken()
	}
	return c
}

// Main runs the CLI and returns the process exit code.
func Main(args []string) int {
	return run(args, os.Stdout, os.Stderr)
}

func run(args []string, stdout, stderr io.Writer) int {
	g := &globals{stdout: stdout, stderr: stderr}
	root := newRoot(g)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	ctx, caught, stop := signalContext()
	defer stop()
	err := root.ExecuteContext(ctx)
	if sig := caught(); sig != nil {
		// The command stopped because of the signal (whatever error it
		// made of the cancellation): say so, with the shell's status.
		fmt.Fprintf(stderr, "Error: interrupted by %v\n", sig)
		return 128 + int(sig.(syscall.Signal))
	}
	if err == nil {
		return 0
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		err, code = ee.err, ee.code
	}
	fmt.Fprintln(stderr, "Error:", err)
	if errors.Is(err, api.ErrNoQuorum) {
		explainNoQuorum(ctx, g, stderr)
	}
	return code
}

// signalContext returns a context cancelled by the first SIGINT or SIGTERM
// and a function that tells which signal cancelled it (nil if none). After
// the first signal the default handling is back, so a second one kills the
// process at once.
func signalContext() (ctx context.Context, caught func() os.Signal, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var mu sync.Mutex
	var got os.Signal
	go func() {
		select {
		case s := <-ch:
			mu.Lock()
			got = s
			mu.Unlock()
			signal.Stop(ch)
			cancel()
		case <-ctx.Done():
		}
	}()
	caught = func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	return ctx, caught, func() { signal.Stop(ch); cancel() }
}

func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "strata",
		Short: "Strata runs a cluster: control plane, node agents, scheduler and simulator in one binary",
		Long: `Strata is a cluster operating system in the line of Borg and Omega.

Start a local one-node cell, then submit work to it:

  strata dev                          # server + agent, data in ./strata-data, API on 127.0.0.1:4680
  strata run -f examples/hello.yaml --wait
  strata status hello
  strata allocs hello
  strata logs <alloc-id>

Client commands talk to $STRATA_ADDR (default ` + api.DefaultAddr + `), or --addr;
either may list several servers of a cell, comma-separated, and the CLI
fails over between them.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.addr, "addr", "", "server address, or several comma-separated (default $STRATA_ADDR or "+api.DefaultAddr+")")
	root.PersistentFlags().StringVar(&g.token, "token", "", "ACL token secret (default $STRATA_TOKEN, else the management token of a 'strata dev --acl' cell in ./strata-data)")
	root.PersistentFlags().StringVarP(&g.namespace, "namespace", "n", "", "namespace of the workloads, allocations, evaluations and events a command names (default $STRATA_NAMESPACE, else \"default\"; docs/tenants.md)")
	root.AddCommand(
		newNamespaceCmd(g), newQuotaCmd(g),
		newDevCmd(g), newServerCmd(g), newAgentCmd(g),
		newTLSCmd(g), newRunCmd(g), newValidateCmd(g), newStatusCmd(g), newAllocsCmd(g),
		newLogsCmd(g), newStopCmd(g), newNodesCmd(g), newNodeCmd(g), newSimCmd(g), newNodesimCmd(g), newBenchCmd(g), newEventsCmd(g), newCellCmd(g), newOperatorCmd(g),
		newKeyringCmd(g), newACLCmd(g), newAuditCmd(g), newAllocCmd(g),
		newServicesCmd(g), newAllocStatusCmd(g),
		newPlanCmd(g), newHistoryCmd(g), newRevertCmd(g), newDeploymentCmd(g), // deployment.go, plan.go
		newIncidentsCmd(g), newIncidentCmd(g), // incidents.go
		newVersionCmd(g),
	)
	wireCompletions(root, g)
	return root
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
