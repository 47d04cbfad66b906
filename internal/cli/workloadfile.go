package cli

import (
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/suggest"
)

// workloadFile is how run, validate and plan read a Workload file: -f FILE
// or FILE as the argument, with its ${var.NAME} references filled from
// --var and --var-file (spec.Substitute).
type workloadFile struct {
	path     string
	vars     []string
	varFiles []string
}

func (f *workloadFile) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.path, "file", "f", "", "Workload YAML file (- for stdin); the file may also be given as the argument")
	cmd.Flags().StringArrayVar(&f.vars, "var", nil, "set the file's ${var.NAME} to VALUE: NAME=VALUE (repeatable; wins over --var-file)")
	cmd.Flags().StringArrayVar(&f.varFiles, "var-file", nil, "YAML file of variables (NAME: VALUE per line) for the file's ${var.NAME} (repeatable; later files win)")
}

// name is the file as messages call it.
func (f *workloadFile) name() string {
	if f.path == "-" {
		return "stdin"
	}
	return f.path
}

// read takes the file from -f or the command's argument, reads it and
// fills in its variables.
func (f *workloadFile) read(args []string) ([]byte, error) {
	switch {
	case len(args) == 1 && f.path != "" && args[0] != f.path:
		return nil, failf("give the Workload file once: -f %s or %s, not both", f.path, args[0])
	case len(args) == 1:
		f.path = args[0]
	case f.path == "":
		return nil, failf("-f/--file is required (a Workload YAML file, or - for stdin)")
	}
	var doc []byte
	var err error
	if f.path == "-" {
		doc, err = io.ReadAll(os.Stdin)
	} else {
		doc, err = os.ReadFile(f.path)
	}
	if err != nil {
		return nil, failf("-f: %v", err)
	}
	vars, fromFlags, err := f.values()
	if err != nil {
		return nil, err
	}
	out, used, err := spec.Substitute(doc, vars)
	if err != nil {
		return nil, failf("%s:\n%v", f.name(), err)
	}
	// A --var the file never refers to is a typo; a variables file may
	// serve several workload files and hold more than one uses.
	for _, name := range fromFlags {
		if !slices.Contains(used, name) {
			return nil, failf("--var %s: %s has no ${var.%s}%s", name, f.name(), name, suggest.DidYouMean(name, used))
		}
	}
	return out, nil
}

// values merges the variables files and the --var flags; it also returns
// the names --var set.
func (f *workloadFile) values() (map[string]string, []string, error) {
	vars := map[string]string{}
	for _, path := range f.varFiles {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, failf("--var-file: %v", err)
		}
		fileVars, err := spec.ParseVarFile(b)
		if err != nil {
			return nil, nil, failf("--var-file %s: %v", path, err)
		}
		for k, v := range fileVars {
			vars[k] = v
		}
	}
	var fromFlags []string
	for _, kv := range f.vars {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, nil, failf("--var %q: want NAME=VALUE", kv)
		}
		if problem := spec.CheckVarName(k); problem != "" {
			return nil, nil, failf("--var %q: %s", kv, problem)
		}
		vars[k] = v
		fromFlags = append(fromFlags, k)
	}
	sort.Strings(fromFlags)
	return vars, fromFlags, nil
}

// fileArg accepts the Workload file as the command's one optional argument.
var fileArg = cobra.MaximumNArgs(1)

func invalidWorkload(file string, err error) error {
	return failf("%s is not a valid Workload:\n%v", file, err)
}
