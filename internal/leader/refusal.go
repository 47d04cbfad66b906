package leader

import (
	"fmt"
	"net/http"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/httpapi/route"
)

// Refusal is a request the leader will not act on, and why: the request
// conflicts with the state, names what is not there, or is invalid (about
// Field). It is not a failure of the leader; the API answers it as the
// refusal it is (route.Reply).
type Refusal struct {
	Kind RefusalKind
	// Code is the answer's stable code; "" takes the kind's.
	Code string
	// Field is the request field it concerns; FieldMsg what is wrong with
	// it ("": Msg).
	Field, FieldMsg string
	Msg             string
}

// RefusalKind says how a request is refused.
type RefusalKind int

const (
	RefusedConflict RefusalKind = iota // 409: the state does not allow it now
	RefusedNotFound                    // 404: it names something that is not there
	RefusedInvalid                     // 400: the request itself is wrong
)

func (r *Refusal) Error() string { return r.Msg }

// Reply is the API's answer to a refusal.
func (r *Refusal) Reply(error) *route.Error {
	e := &route.Error{Msg: r.Msg, Code: r.Code}
	switch r.Kind {
	case RefusedNotFound:
		e.Status = http.StatusNotFound
		e.Code = cmpOr(e.Code, "not-found")
	case RefusedInvalid:
		e.Status = http.StatusBadRequest
		e.Code = cmpOr(e.Code, "bad-request")
		e.Msg = r.Field + ": " + r.Msg
	default:
		e.Status = http.StatusConflict
		e.Code = cmpOr(e.Code, "conflict")
	}
	if r.Field != "" {
		msg := r.FieldMsg
		if msg == "" {
			msg = r.Msg
		}
		e.Fields = []api.FieldError{{Path: r.Field, Message: msg}}
	}
	return e
}

func cmpOr(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

// conflict refuses a request the state does not allow now.
func conflict(format string, args ...any) error {
	return &Refusal{Kind: RefusedConflict, Msg: fmt.Sprintf(format, args...)}
}
