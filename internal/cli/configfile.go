package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/internal/suggest"
)

// A daemon's configuration file (strata server|agent|dev --config FILE):
// a YAML (or JSON) mapping in which every flag of the command has a key,
// the flag's name either as written on the command line or camel-cased
// (data-dir or dataDir, bootstrap-expect or bootstrapExpect). A list gives
// a repeatable flag its values (join, servers); labels is a mapping for
// --label. Flags given on the command line override the file; the file
// overrides the environment variables some flags default to. An unknown
// key is refused, with the flag it likely stands for.
//
// The file goes through the flags themselves, so a key takes exactly what
// its flag takes and a new flag has its key without anyone writing one.

// configFlag is the name of the flag that names the file; it has no key.
const configFlag = "config"

// labelsKey is the mapping form of the repeatable --label key=value.
const labelsKey = "labels"

// addConfigFlag adds --config to a daemon command and reads the file before
// the command runs.
func addConfigFlag(cmd *cobra.Command, what string) {
	var path string
	cmd.Flags().StringVar(&path, configFlag, "", what+" configuration file (YAML): every flag has a key, its name as on the command line or camel-cased (data-dir or dataDir); flags given here override it (docs/install.md)")
	cmd.PreRunE = func(cmd *cobra.Command, _ []string) error {
		if path == "" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return failf("--config: %v", err)
		}
		if err := applyConfig(cmd.Flags(), b); err != nil {
			return failf("--config %s: %v", path, err)
		}
		return nil
	}
}

// camelCase turns a flag name into its camel-cased key: data-dir → dataDir.
func camelCase(flag string) string {
	parts := strings.Split(flag, "-")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// configKeys maps every key a command's file accepts to its flag's name.
func configKeys(fs *pflag.FlagSet) map[string]string {
	keys := map[string]string{}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden || f.Name == configFlag || f.Name == "help" {
			return
		}
		keys[f.Name] = f.Name
		keys[camelCase(f.Name)] = f.Name
	})
	if fs.Lookup("label") != nil {
		keys[labelsKey] = "label"
	}
	return keys
}

// applyConfig sets the flags of fs that the command line left alone from
// the file's contents.
func applyConfig(fs *pflag.FlagSet, data []byte) error {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // an empty file sets nothing
		}
		return err
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.ShortTag() == "!!null" {
		return nil
	}
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: expected a mapping of flag names to values", root.Line)
	}
	keys := configKeys(fs)
	known := make([]string, 0, len(keys))
	for k := range keys {
		known = append(known, k)
	}
	sort.Strings(known)
	var problems []string
	fail := func(line int, key, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("line %d: %s: %s", line, key, fmt.Sprintf(format, args...)))
	}
	seen := map[string]string{} // flag name → the key that set it
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		name, ok := keys[k.Value]
		if !ok {
			fail(k.Line, k.Value, "unknown key%s", suggest.DidYouMean(k.Value, known))
			continue
		}
		if other, dup := seen[name]; dup {
			fail(k.Line, k.Value, "--%s is set twice (also as %s)", name, other)
			continue
		}
		seen[name] = k.Value
		values, err := configValues(k.Value, v)
		if err != nil {
			fail(v.Line, k.Value, "%v", err)
			continue
		}
		if err := setFlag(fs, name, values); err != nil {
			fail(v.Line, k.Value, "%v", err)
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "\n"))
	}
	return nil
}

// configValues reads a key's value as the flag arguments it stands for:
// one scalar, a list of them (a repeatable flag), or a mapping of labels
// (key=value each).
func configValues(key string, v *yaml.Node) ([]string, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.ShortTag() == "!!null" {
			return nil, errors.New("no value")
		}
		return []string{v.Value}, nil
	case yaml.SequenceNode:
		out := make([]string, 0, len(v.Content))
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: expected a single value in the list", item.Line)
			}
			out = append(out, item.Value)
		}
		return out, nil
	case yaml.MappingNode:
		if key != labelsKey {
			return nil, errors.New("expected a value or a list, got a mapping")
		}
		out := make([]string, 0, len(v.Content)/2)
		for i := 0; i+1 < len(v.Content); i += 2 {
			out = append(out, v.Content[i].Value+"="+v.Content[i+1].Value)
		}
		return out, nil
	}
	return nil, errors.New("expected a value")
}

// setFlag gives flag name the file's values, unless the command line gave
// it; labels from the file and the command line merge (the command line's
// win for a key both name).
func setFlag(fs *pflag.FlagSet, name string, values []string) error {
	f := fs.Lookup(name)
	sv, repeatable := f.Value.(pflag.SliceValue)
	if !repeatable && len(values) != 1 {
		return fmt.Errorf("--%s takes one value, got %d", name, len(values))
	}
	if f.Changed {
		if name == "label" && repeatable {
			return sv.Replace(append(slices.Clone(values), sv.GetSlice()...))
		}
		return nil
	}
	if repeatable {
		if err := sv.Replace(values); err != nil {
			return err
		}
		f.Changed = true
		return nil
	}
	return fs.Set(name, values[0])
}
