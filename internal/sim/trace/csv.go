package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ParseError is a malformed value in a trace file. Its message reads
// "file:line:column: reason", the column being the header name where the
// file has a header and the 1-based position otherwise.
type ParseError struct {
	File   string
	Line   int
	Column string
	Err    error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%s: %v", e.File, e.Line, e.Column, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }

// ErrMissingColumn is returned (wrapped in a ParseError) when a header lacks a
// column the loader needs.
var ErrMissingColumn = errors.New("missing required column")

// table reads a CSV file row by row and maps columns by header name.
type table struct {
	file   string
	r      *csv.Reader
	header []string
	index  map[string]int
	line   int
	row    []string
}

func newTable(file string, r io.Reader) (*table, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		if err == io.EOF {
			return nil, &ParseError{File: file, Line: 1, Column: "header", Err: errors.New("empty file")}
		}
		return nil, &ParseError{File: file, Line: 1, Column: "header", Err: err}
	}
	t := &table{file: file, r: cr, header: append([]string(nil), head...), index: map[string]int{}, line: 1}
	for i, h := range t.header {
		t.index[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	return t, nil
}

// require fails unless every named column is present.
func (t *table) require(cols ...string) error {
	for _, c := range cols {
		if _, ok := t.index[c]; !ok {
			return &ParseError{File: t.file, Line: 1, Column: c, Err: ErrMissingColumn}
		}
	}
	return nil
}

func (t *table) has(col string) bool { _, ok := t.index[col]; return ok }

// next advances to the next data row; it returns false at the end of file.
func (t *table) next() (bool, error) {
	row, err := t.r.Read()
	if err == io.EOF {
		return false, nil
	}
	t.line++
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return false, &ParseError{File: t.file, Line: pe.Line, Column: strconv.Itoa(pe.Column), Err: pe.Err}
		}
		return false, &ParseError{File: t.file, Line: t.line, Column: "-", Err: err}
	}
	t.row = row
	return true, nil
}

// str returns a column of the current row; "" when the column is absent or
// the row is short.
func (t *table) str(col string) string {
	i, ok := t.index[col]
	if !ok || i >= len(t.row) {
		return ""
	}
	return strings.TrimSpace(t.row[i])
}

func (t *table) errf(col string, format string, args ...any) error {
	return &ParseError{File: t.file, Line: t.line, Column: col, Err: fmt.Errorf(format, args...)}
}

// int64 parses a column; empty yields def.
func (t *table) int64(col string, def int64) (int64, error) {
	s := t.str(col)
	if s == "" {
		return def, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		// Some exports write integers as floats ("12.0").
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != float64(int64(f)) {
			return 0, t.errf(col, "not an integer: %q", s)
		}
		v = int64(f)
	}
	if v < 0 && def >= 0 {
		return 0, t.errf(col, "negative value %d", v)
	}
	return v, nil
}
