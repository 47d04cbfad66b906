package spec

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// FieldError is one problem with one field of a document.
type FieldError struct {
	// Path names the field, e.g. spec.groups[0].tasks[1].resources.memory;
	// empty when the problem is with the document as a whole (bad YAML).
	Path    string `json:"path"`
	Message string `json:"message"`
	// Line is the 1-based line of the field in the document, 0 if unknown.
	Line int `json:"line,omitempty"`
}

func (e FieldError) Error() string {
	if e.Path == "" {
		return e.Message
	}
	return e.Path + ": " + e.Message
}

// Errors is every problem Parse found in a document, in document order. It
// is the only error type Parse returns.
type Errors struct {
	List []FieldError `json:"errors"`
}

// Error lists the problems one per line as "path: message".
func (e *Errors) Error() string {
	lines := make([]string, len(e.List))
	for i, fe := range e.List {
		lines[i] = fe.Error()
	}
	return strings.Join(lines, "\n")
}

// Paths returns the field path of every problem, in order.
func (e *Errors) Paths() []string {
	paths := make([]string, len(e.List))
	for i, fe := range e.List {
		paths[i] = fe.Path
	}
	return paths
}

// sortByLine puts problems in document order. Problems found after the walk
// (a missing field is noticed only once its parent is read) carry their
// parent's line, so the sort places them next to it; the sort is stable so
// problems on one line keep the order they were found in.
func (e *Errors) sortByLine() {
	slices.SortStableFunc(e.List, func(a, b FieldError) int { return cmp.Compare(a.Line, b.Line) })
}

func (e *Errors) add(path string, line int, format string, args ...any) {
	e.List = append(e.List, FieldError{Path: path, Message: fmt.Sprintf(format, args...), Line: line})
}
