package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/spec"
	"github.com/strata-dev/strata/internal/strictjson"
)

// This file is the API edge's one way of reading a request: bodies through
// strictjson, path parameters through spec.CheckID and spec.CheckName,
// query parameters through query. Every problem is a 400 whose fields name
// the body field, the path parameter or the query parameter.

// invalid is a 400 with a stable code and every problem as a field.
func invalid(code string, fields []api.FieldError) error {
	msg := make([]string, len(fields))
	for i, f := range fields {
		if f.Path == "" {
			msg[i] = f.Message
		} else {
			msg[i] = f.Path + ": " + f.Message
		}
	}
	return &httpError{status: http.StatusBadRequest, code: code, msg: strings.Join(msg, "; "), fields: fields}
}

// decodeJSON reads a size-limited JSON body into v strictly: one JSON
// object, nothing after it, only v's fields, each of its type. Problems are
// a 400 with code naming every field ("" for the body as a whole).
func decodeJSON(w http.ResponseWriter, r *http.Request, code string, v any) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	return decodeStrict(body, code, v)
}

// decodeStrict is decodeJSON for a body already read.
func decodeStrict(body []byte, code string, v any) error {
	err := strictjson.Decode(body, v)
	var problems strictjson.Errors
	if !errors.As(err, &problems) {
		return err
	}
	fields := make([]api.FieldError, len(problems))
	for i, p := range problems {
		fields[i] = api.FieldError{Path: p.Path, Message: p.Message}
	}
	return invalid(code, fields)
}

// pathID returns the path parameter name, checked as an identifier (node,
// allocation and evaluation ids and prefixes, node names).
func pathID(r *http.Request, name string) (string, error) {
	return pathParam(r, name, spec.CheckID)
}

// pathName returns the path parameter name, checked as a workload name.
func pathName(r *http.Request, name string) (string, error) {
	return pathParam(r, name, spec.CheckName)
}

func pathParam(r *http.Request, name string, check func(string) string) (string, error) {
	v := r.PathValue(name)
	if problem := check(v); problem != "" {
		return "", invalid("invalid-parameter", []api.FieldError{{Path: name, Message: problem}})
	}
	return v, nil
}

// query reads a request's query parameters, collecting a problem per bad
// one. Each parameter may appear once. Parameters no endpoint knows are
// ignored, as in every HTTP API: a client may send a newer server's
// parameter.
type query struct {
	values url.Values
	fields []api.FieldError
}

func newQuery(r *http.Request) *query { return &query{values: r.URL.Query()} }

func (q *query) fail(name, format string, args ...any) {
	q.fields = append(q.fields, api.FieldError{Path: name, Message: fmt.Sprintf(format, args...)})
}

// one returns the parameter's value and whether it was given.
func (q *query) one(name string) (string, bool) {
	vs, ok := q.values[name]
	switch {
	case !ok:
		return "", false
	case len(vs) > 1:
		q.fail(name, "given %d times; give it once", len(vs))
		return "", false
	}
	return vs[0], true
}

func (q *query) uint(name string) uint64 {
	s, ok := q.one(name)
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		q.fail(name, "expected an unsigned 64-bit integer, got %.64q", s)
	}
	return n
}

// nonNegative reads an int64 of 0 or more.
func (q *query) nonNegative(name string) int64 {
	s, ok := q.one(name)
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		q.fail(name, "expected an integer of 0 or more, got %.64q", s)
		return 0
	}
	return n
}

// duration reads a Go duration of 0 or more; given is false when absent.
func (q *query) duration(name string) (d time.Duration, given bool) {
	s, ok := q.one(name)
	if !ok {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		q.fail(name, "expected a duration of 0 or more such as 30s, got %.64q", s)
		return 0, false
	}
	return d, true
}

// boolean reads true or false; absent is false.
func (q *query) boolean(name string) bool {
	s, ok := q.one(name)
	if !ok {
		return false
	}
	switch s {
	case "true":
		return true
	case "false":
		return false
	}
	q.fail(name, "expected true or false, got %.64q", s)
	return false
}

// oneOf reads one of choices; absent is "".
func (q *query) oneOf(name string, choices ...string) string {
	s, ok := q.one(name)
	if !ok {
		return ""
	}
	for _, c := range choices {
		if s == c {
			return s
		}
	}
	q.fail(name, "expected %s, got %.64q", strings.Join(choices, " or "), s)
	return ""
}

// checked reads a parameter that must pass check (spec.CheckName,
// spec.CheckID); absent is "".
func (q *query) checked(name string, check func(string) string) string {
	s, ok := q.one(name)
	if !ok {
		return ""
	}
	if problem := check(s); problem != "" {
		q.fail(name, "%s", problem)
		return ""
	}
	return s
}

// err is the 400 for every problem found, or nil.
func (q *query) err() error {
	if len(q.fields) == 0 {
		return nil
	}
	return invalid("invalid-parameter", q.fields)
}
