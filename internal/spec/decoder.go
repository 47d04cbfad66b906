package spec

import (
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/fieldpath"
	"github.com/strata-dev/strata/internal/suggest"
)

// maxNodes bounds how many YAML nodes one Parse visits. Aliases let a small
// document expand exponentially ("billion laughs"); the budget turns that
// into one error instead of a hung API server. Real workloads use a few
// hundred nodes.
const maxNodes = 100_000

// maxErrors bounds the problems reported for one document: past a hundred,
// more lines help nobody and only grow a hostile request's response.
const maxErrors = 100

// decoder walks a YAML node tree, collecting every problem and every
// accepted-but-unenforced field instead of stopping at the first.
type decoder struct {
	errs      Errors
	notices   []notice
	visited   int
	exhausted bool
	// refs collects the port names a group's task checks refer to while
	// its tasks are decoded (nil outside a group).
	refs *[]portRef
}

// notice is an api.Notice with the line it came from, so notices can be
// listed in document order whatever order the checks ran in.
type notice struct {
	api.Notice
	line int
}

func (d *decoder) fail(path string, n *yaml.Node, format string, args ...any) {
	d.report(path, line(n), format, args...)
}

// report records a problem, and stops the walk once there are too many.
func (d *decoder) report(path string, line int, format string, args ...any) {
	if len(d.errs.List) >= maxErrors {
		return
	}
	d.errs.add(path, line, format, args...)
	if len(d.errs.List) == maxErrors {
		d.exhausted = true
		d.errs.add("", math.MaxInt, "too many problems; stopped after %d", maxErrors)
	}
}

// missing reports a problem with a field that is absent from the mapping n,
// such as a required field. It takes the last line of n, so that it sorts
// after the problems found inside n: the user reads top to bottom, and
// "command: required" belongs after "comand: unknown field".
func (d *decoder) missing(path string, n *yaml.Node, format string, args ...any) {
	d.report(path, endLine(n, 0), format, args...)
}

// endLine is the largest line in the subtree of n, not following aliases.
func endLine(n *yaml.Node, depth int) int {
	if n == nil {
		return 0
	}
	last := n.Line
	if depth > 100 {
		return last
	}
	for _, c := range n.Content {
		last = max(last, endLine(c, depth+1))
	}
	return last
}

func (d *decoder) notice(path string, n *yaml.Node, value, message string) {
	d.notices = append(d.notices, notice{api.Notice{Field: path, Value: value, Message: message}, line(n)})
}

func line(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

// resolve follows aliases and charges the node budget. It returns nil once
// the budget is spent; callers then stop walking.
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	if d.exhausted {
		return nil
	}
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		if hops > 100 {
			n = nil
			break
		}
		n = n.Alias
	}
	d.visited++
	if d.visited > maxNodes {
		d.exhausted = true
		d.report("", line(n), "document too large: more than %d YAML nodes once aliases are expanded", maxNodes)
		return nil
	}
	return n
}

// present reports whether a field was given a value: absent fields and
// explicit nulls ("replicas:" with nothing after it) both mean "unset", so
// that defaults apply and a required field reports "required" once.
func present(n *yaml.Node) bool {
	n = deref(n)
	return n != nil && !(n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// deref follows aliases without charging the budget, for peeking at a
// node's kind; walking goes through resolve.
func deref(n *yaml.Node) *yaml.Node {
	for hops := 0; n != nil && n.Kind == yaml.AliasNode && hops <= 100; hops++ {
		n = n.Alias
	}
	return n
}

// describe names the YAML type of n for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!str":
			return "a string"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		case "!!null":
			return "null"
		}
		return n.ShortTag()
	}
	return "an unknown YAML node"
}

func (d *decoder) typeErr(path string, n *yaml.Node, want string) {
	d.fail(path, n, "expected %s, got %s", want, describe(n))
}

// join extends a field path; keys that are not plain identifiers (label
// keys such as strata.dev/team) are bracketed so the path stays
// unambiguous.
func join(path, key string) string { return fieldpath.Join(path, key) }

func index(path string, i int) string { return fieldpath.Index(path, i) }

// fields walks the mapping n at path, calling field with each key, the
// key's path and its value. field reports whether it knows the key; unknown
// keys are errors, which name the key of known that was likely meant (known
// is nil where keys are free-form, such as labels). An unset n is an empty
// mapping. It reports whether n was a mapping.
func (d *decoder) fields(path string, n *yaml.Node, known []string, field func(key, path string, v *yaml.Node) bool) bool {
	if !present(n) {
		return true
	}
	if n = d.resolve(n); n == nil {
		return false
	}
	if n.Kind != yaml.MappingNode {
		d.typeErr(path, n, "a mapping")
		return false
	}
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := d.resolve(n.Content[i]), n.Content[i+1]
		if k == nil {
			return false
		}
		if k.Kind != yaml.ScalarNode {
			d.fail(path, k, "keys must be strings, got %s", describe(k))
			continue
		}
		if k.ShortTag() == "!!merge" {
			d.fail(join(path, k.Value), k, "merge keys (<<) are not supported; repeat the fields")
			continue
		}
		p := join(path, k.Value)
		if seen[k.Value] {
			d.fail(p, k, "duplicate field")
			continue
		}
		seen[k.Value] = true
		if !field(k.Value, p, v) {
			d.fail(p, k, "unknown field%s", suggest.DidYouMean(k.Value, known))
		}
	}
	return true
}

// items walks the list n at path. An unset n is an empty list.
func (d *decoder) items(path string, n *yaml.Node, item func(i int, path string, v *yaml.Node)) bool {
	if !present(n) {
		return true
	}
	if n = d.resolve(n); n == nil {
		return false
	}
	if n.Kind != yaml.SequenceNode {
		d.typeErr(path, n, "a list")
		return false
	}
	for i, v := range n.Content {
		if d.exhausted {
			return false
		}
		item(i, index(path, i), v)
	}
	return true
}

// scalar resolves n and checks that it is a scalar with one of the given
// tags. It reports false, without an error, when n is unset.
func (d *decoder) scalar(path string, n *yaml.Node, want string, tags ...string) (*yaml.Node, bool) {
	if !present(n) {
		return nil, false
	}
	if n = d.resolve(n); n == nil {
		return nil, false
	}
	if n.Kind == yaml.ScalarNode {
		for _, t := range tags {
			if n.ShortTag() == t {
				return n, true
			}
		}
	}
	d.typeErr(path, n, want)
	return nil, false
}

func (d *decoder) str(path string, n *yaml.Node) (string, bool) {
	n, ok := d.scalar(path, n, "a string", "!!str")
	if !ok {
		return "", false
	}
	return d.noNUL(path, n)
}

// noNUL refuses a string holding a NUL byte ("\0" in YAML, "\u0000" in
// JSON): no program argument, environment value, path or name can carry
// one, and a C string would silently end there.
func (d *decoder) noNUL(path string, n *yaml.Node) (string, bool) {
	if i := strings.IndexByte(n.Value, 0); i >= 0 {
		d.fail(path, n, "must not contain NUL bytes (found one at byte %d)", i)
		return "", false
	}
	return n.Value, true
}

// text accepts any scalar as its literal text: label values, environment
// values and rule values are strings, but "row: 3" and "DEBUG: true" are too
// natural to reject.
func (d *decoder) text(path string, n *yaml.Node) (string, bool) {
	n, ok := d.scalar(path, n, "a single value", "!!str", "!!int", "!!float", "!!bool")
	if !ok {
		return "", false
	}
	return d.noNUL(path, n)
}

func (d *decoder) integer(path string, n *yaml.Node) (int64, bool) {
	n, ok := d.scalar(path, n, "an integer", "!!int")
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(n.Value, 0, 64)
	if err != nil {
		d.fail(path, n, "integer %q out of range", n.Value)
		return 0, false
	}
	return v, true
}

func (d *decoder) boolean(path string, n *yaml.Node) (bool, bool) {
	n, ok := d.scalar(path, n, "true or false", "!!bool")
	if !ok {
		return false, false
	}
	v, err := strconv.ParseBool(n.Value)
	if err != nil {
		d.fail(path, n, "expected true or false, got %q", n.Value)
		return false, false
	}
	return v, true
}

// quantity returns the text of a resource quantity, which YAML may have
// typed as an integer (cpu: 8), a number (gpu: 0.5) or a string (64Mi).
func (d *decoder) quantity(path string, n *yaml.Node, example string) (*yaml.Node, bool) {
	return d.scalar(path, n, "a quantity such as "+example, "!!str", "!!int", "!!float")
}

// duration parses Go duration syntax ("500ms", "5s", "1m30s"), between 0
// and MaxDuration.
func (d *decoder) duration(path string, n *yaml.Node) (time.Duration, bool) {
	return d.boundedDuration(path, n, MaxDuration)
}

// boundedDuration is duration with a tighter maximum.
func (d *decoder) boundedDuration(path string, n *yaml.Node, maximum time.Duration) (time.Duration, bool) {
	n, ok := d.scalar(path, n, `a duration such as "5s"`, "!!str")
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		d.fail(path, n, "invalid duration %.64q (want Go syntax such as 500ms, 5s, 1m30s)", n.Value)
		return 0, false
	}
	switch {
	case v < 0:
		d.fail(path, n, "negative duration %q", n.Value)
		return 0, false
	case v > maximum:
		d.fail(path, n, "must be at most %s, got %s", FormatDuration(maximum), n.Value)
		return 0, false
	}
	return v, true
}

// FormatDuration writes a duration without zero units: 1h, 168h, 1m30s.
func FormatDuration(v time.Duration) string {
	s := v.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// strings decodes a list of strings; text decides whether any scalar is
// accepted as text or only strings are.
func (d *decoder) strings(path string, n *yaml.Node, anyScalar bool) ([]string, bool) {
	var out []string
	ok := d.items(path, n, func(_ int, p string, v *yaml.Node) {
		var s string
		var good bool
		if anyScalar {
			s, good = d.text(p, v)
		} else {
			s, good = d.str(p, v)
		}
		if !good && !present(v) {
			d.fail(p, v, "expected a string, got null")
		}
		if good {
			out = append(out, s)
		}
	})
	return out, ok
}

// textMap decodes a mapping of string keys to scalar values, checking every
// key with validKey (which returns a problem or "").
func (d *decoder) textMap(path string, n *yaml.Node, validKey func(string) string) map[string]string {
	var out map[string]string
	d.fields(path, n, nil, func(key, p string, v *yaml.Node) bool {
		if problem := validKey(key); problem != "" {
			d.fail(p, v, "%s", problem)
			return true
		}
		s, ok := d.text(p, v)
		if !ok && !present(v) {
			ok = true // "KEY:" with nothing after it is an empty value
		}
		if ok {
			if out == nil {
				out = make(map[string]string)
			}
			out[key] = s
		}
		return true
	})
	return out
}
