package spec

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/internal/suggest"
)

// Variables in a workload file let one file serve several environments:
// ${var.NAME} in the text is replaced by NAME's value before the file is
// parsed (strata run --var NAME=VALUE, --var-file FILE). Only the var.
// prefix is replaced, so a task's own ${HOME} or $PATH, meant for its
// shell, is left alone; $${var.NAME} writes ${var.NAME} itself. A value is
// inserted as text: quote the reference ("${var.tag}") where the value
// could read as something other than a string.

// varRef matches a reference and its escape: $${var.x} or ${var.x}.
var varRef = regexp.MustCompile(`\$?\$\{var\.([^}]*)\}`)

// varName is what a variable may be called.
var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// CheckVarName returns the problem with a variable's name, or "".
func CheckVarName(name string) string {
	if !varName.MatchString(name) {
		return fmt.Sprintf("invalid variable name %.64q: use letters, digits, '_' and '-', starting with a letter or '_'", name)
	}
	return ""
}

// Substitute replaces every ${var.NAME} of doc with vars[NAME]. It returns
// the names the document refers to. A reference to a variable vars does not
// hold is an error (*Errors, one per reference, with its line), naming the
// variable and how to give it.
func Substitute(doc []byte, vars map[string]string) ([]byte, []string, error) {
	var errs Errors
	used := map[string]bool{}
	known := make([]string, 0, len(vars))
	for k := range vars {
		known = append(known, k)
	}
	sort.Strings(known)
	var out bytes.Buffer
	line, last := 1, 0
	for _, m := range varRef.FindAllSubmatchIndex(doc, -1) {
		start, end := m[0], m[1]
		line += bytes.Count(doc[last:start], []byte("\n"))
		out.Write(doc[last:start])
		last = end
		ref := doc[start:end]
		if bytes.HasPrefix(ref, []byte("$$")) {
			out.Write(ref[1:]) // escaped: the reference itself
			continue
		}
		name := string(doc[m[2]:m[3]])
		used[name] = true
		switch value, ok := vars[name]; {
		case CheckVarName(name) != "":
			errs.add("", line, "line %d: ${var.%s}: %s", line, name, CheckVarName(name))
		case !ok:
			errs.add("", line, "line %d: ${var.%s} is not defined: give --var %s=VALUE or put %s: in a --var-file%s",
				line, name, name, name, suggest.DidYouMean(name, known))
		default:
			out.WriteString(value)
		}
	}
	out.Write(doc[last:])
	names := make([]string, 0, len(used))
	for k := range used {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(errs.List) > 0 {
		return nil, names, &errs
	}
	return out.Bytes(), names, nil
}

// ParseVarFile reads a variables file: a YAML mapping of names to single
// values (strings, numbers, booleans), as in
//
//	env: staging
//	replicas: 3
func ParseVarFile(data []byte) (map[string]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	out := map[string]string{}
	if len(doc.Content) == 0 {
		return out, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: expected a mapping of variable names to values", root.Line)
	}
	var problems []string
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch {
		case CheckVarName(k.Value) != "":
			problems = append(problems, fmt.Sprintf("line %d: %s", k.Line, CheckVarName(k.Value)))
		case v.Kind != yaml.ScalarNode:
			problems = append(problems, fmt.Sprintf("line %d: %s: expected a single value", v.Line, k.Value))
		case v.ShortTag() == "!!null":
			problems = append(problems, fmt.Sprintf("line %d: %s: no value", v.Line, k.Value))
		default:
			out[k.Value] = v.Value
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(problems, "\n"))
	}
	return out, nil
}
