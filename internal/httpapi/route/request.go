package route

import (
	"errors"
	"fmt"
	"io"
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
// query parameters through Query. Every problem is a 400 whose fields name
// the body field, the path parameter or the query parameter.

// MaxBodyBytes bounds every request body; larger bodies get 413.
const MaxBodyBytes = 4 << 20

// MaxWait caps a blocking query's wait.
const MaxWait = 5 * time.Minute

// IndexHeader carries the state index of a response, for blocking
// queries.
const IndexHeader = "X-Strata-Index"

// ReadBody reads a size-limited request body; too large gives 413.
func ReadBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &Error{Status: http.StatusRequestEntityTooLarge, Code: "too-large",
				Msg: fmt.Sprintf("request body exceeds %d bytes", MaxBodyBytes)}
		}
		return nil, BadRequest("read body: %v", err)
	}
	return body, nil
}

// DecodeJSON reads a size-limited JSON body into v strictly: one JSON
// object, nothing after it, only v's fields, each of its type. Problems are
// a 400 with code naming every field ("" for the body as a whole).
func DecodeJSON(w http.ResponseWriter, r *http.Request, code string, v any) error {
	body, err := ReadBody(w, r)
	if err != nil {
		return err
	}
	return DecodeStrict(body, code, v)
}

// DecodeStrict is DecodeJSON for a body already read.
func DecodeStrict(body []byte, code string, v any) error {
	err := strictjson.Decode(body, v)
	var problems strictjson.Errors
	if !errors.As(err, &problems) {
		return err
	}
	fields := make([]api.FieldError, len(problems))
	for i, p := range problems {
		fields[i] = api.FieldError{Path: p.Path, Message: p.Message}
	}
	return Invalid(code, fields)
}

// PathID returns the path parameter name, checked as an identifier (node,
// allocation and evaluation ids and prefixes, node names).
func PathID(r *http.Request, name string) (string, error) {
	return pathParam(r, name, spec.CheckID)
}

// PathName returns the path parameter name, checked as a workload name.
func PathName(r *http.Request, name string) (string, error) {
	return pathParam(r, name, spec.CheckName)
}

func pathParam(r *http.Request, name string, check func(string) string) (string, error) {
	v := r.PathValue(name)
	if problem := check(v); problem != "" {
		return "", Invalid("invalid-parameter", []api.FieldError{{Path: name, Message: problem}})
	}
	return v, nil
}

// Query reads a request's query parameters, collecting a problem per bad
// one. Each parameter may appear once. Parameters no endpoint knows are
// ignored, as in every HTTP API: a client may send a newer server's
// parameter.
type Query struct {
	values url.Values
	fields []api.FieldError
}

// NewQuery reads r's query.
func NewQuery(r *http.Request) *Query { return &Query{values: r.URL.Query()} }

func (q *Query) fail(name, format string, args ...any) {
	q.fields = append(q.fields, api.FieldError{Path: name, Message: fmt.Sprintf(format, args...)})
}

// One returns the parameter's value and whether it was given.
func (q *Query) One(name string) (string, bool) {
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

// Uint reads an unsigned 64-bit integer; absent is 0.
func (q *Query) Uint(name string) uint64 {
	s, ok := q.One(name)
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		q.fail(name, "expected an unsigned 64-bit integer, got %.64q", s)
	}
	return n
}

// NonNegative reads an int64 of 0 or more.
func (q *Query) NonNegative(name string) int64 {
	s, ok := q.One(name)
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

// Duration reads a Go duration of 0 or more; given is false when absent.
func (q *Query) Duration(name string) (d time.Duration, given bool) {
	s, ok := q.One(name)
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

// Boolean reads true or false; absent is false.
func (q *Query) Boolean(name string) bool {
	s, ok := q.One(name)
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

// OneOf reads one of choices; absent is "".
func (q *Query) OneOf(name string, choices ...string) string {
	s, ok := q.One(name)
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

// Checked reads a parameter that must pass check (spec.CheckName,
// spec.CheckID); absent is "".
func (q *Query) Checked(name string, check func(string) string) string {
	s, ok := q.One(name)
	if !ok {
		return ""
	}
	if problem := check(s); problem != "" {
		q.fail(name, "%s", problem)
		return ""
	}
	return s
}

// Namespace reads ?namespace= (api.DefaultNamespace when absent).
func (q *Query) Namespace() string {
	return api.NamespaceOf(q.Checked(api.QueryNamespace, spec.CheckName))
}

// Err is the 400 for every problem found, or nil.
func (q *Query) Err() error {
	if len(q.fields) == 0 {
		return nil
	}
	return Invalid("invalid-parameter", q.fields)
}

// BlockingParams reads ?index=N&wait=D: a blocking query's index and how
// long it waits (30s by default when an index is given, at most MaxWait).
func BlockingParams(r *http.Request) (uint64, time.Duration, error) {
	q := NewQuery(r)
	index := q.Uint("index")
	wait, given := q.Duration("wait")
	if err := q.Err(); err != nil {
		return 0, 0, err
	}
	if !given && index > 0 {
		wait = 30 * time.Second
	}
	return index, min(wait, MaxWait), nil
}
