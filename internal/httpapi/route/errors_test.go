package route

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// unavailable is a Reply of another room (the replica's not-leader).
type unavailable struct{}

func (unavailable) Error() string { return "not the leader" }
func (unavailable) Reply(chain error) *Error {
	return &Error{Status: http.StatusServiceUnavailable, Code: "not-leader", Msg: chain.Error() + "; retry", RetryAfter: 1e9}
}

// TestAnswer: an Error is sent as it is, a Reply (wrapped or not) as it
// says from the whole chain, anything else as a 500.
func TestAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		code   string
		msg    string
	}{
		{"an Error", NotFound("workload %q not found", "w"), 404, "not-found", `workload "w" not found`},
		{"a wrapped Error", fmt.Errorf("read: %w", Conflict("busy", "try later")), 409, "busy", "try later"},
		{"a Reply", unavailable{}, 503, "not-leader", "not the leader; retry"},
		{"a wrapped Reply", fmt.Errorf("%w: no leader elected yet", unavailable{}), 503, "not-leader", "not the leader: no leader elected yet; retry"},
		{"anything else", errors.New("disk full"), 500, "internal", "disk full"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if e := Answer(tc.err); e.Status != tc.status || e.Code != tc.code || e.Msg != tc.msg {
				t.Fatalf("answer %d %q %q, want %d %q %q", e.Status, e.Code, e.Msg, tc.status, tc.code, tc.msg)
			}
		})
	}
	rec := httptest.NewRecorder()
	WriteError(rec, Answer(unavailable{}))
	if rec.Header().Get("Retry-After") != "1" || rec.Header().Get(ErrorCodeHeader) != "not-leader" {
		t.Fatalf("headers %v", rec.Header())
	}
}

// TestQuery: each parameter once, each problem a field.
func TestQuery(t *testing.T) {
	r := httptest.NewRequest("GET", "/x?index=7&wait=oops&purge=true&purge=false&namespace=team-a", nil)
	q := NewQuery(r)
	if q.Uint("index") != 7 || q.Namespace() != "team-a" {
		t.Fatal("good parameters misread")
	}
	q.Duration("wait")
	q.Boolean("purge")
	var e *Error
	if err := q.Err(); !errors.As(err, &e) || len(e.Fields) != 2 || e.Fields[0].Path != "wait" || e.Fields[1].Path != "purge" {
		t.Fatalf("problems %v, want wait and purge named", err)
	}
}
