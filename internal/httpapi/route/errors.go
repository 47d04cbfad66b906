package route

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/strata-dev/strata/api"
)

// ErrorCodeHeader carries an error answer's code, for the audit log.
const ErrorCodeHeader = "X-Strata-Error-Code"

// Error is an answer that is an error: a status, a stable code, a message
// that says the fix, and the fields it concerns.
type Error struct {
	Status int
	Code   string
	Msg    string
	Fields []api.FieldError
	// RetryAfter, when set, is sent as Retry-After: the client may retry.
	RetryAfter time.Duration
	// Warn logs the answer as a warning (the client cannot tell what
	// happened; the operator may want to).
	Warn bool
}

func (e *Error) Error() string { return e.Msg }

// A Reply is an error of another room that knows its answer: given the
// whole chain of errors it is in, it returns the Error to send. The
// replica's ErrNotLeader is one.
type Reply interface {
	error
	Reply(chain error) *Error
}

// NotFound is a 404.
func NotFound(format string, args ...any) error {
	return &Error{Status: http.StatusNotFound, Code: "not-found", Msg: fmt.Sprintf(format, args...)}
}

// BadRequest is a 400 with the generic code.
func BadRequest(format string, args ...any) error {
	return &Error{Status: http.StatusBadRequest, Code: "bad-request", Msg: fmt.Sprintf(format, args...)}
}

// Conflict is a 409 with the given code.
func Conflict(code, format string, args ...any) error {
	return &Error{Status: http.StatusConflict, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Forbidden is a 403 with the given code.
func Forbidden(code, format string, args ...any) error {
	return &Error{Status: http.StatusForbidden, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Invalid is a 400 with a stable code and every problem as a field.
func Invalid(code string, fields []api.FieldError) error {
	msg := ""
	for i, f := range fields {
		if i > 0 {
			msg += "; "
		}
		if f.Path == "" {
			msg += f.Message
		} else {
			msg += f.Path + ": " + f.Message
		}
	}
	return &Error{Status: http.StatusBadRequest, Code: code, Msg: msg, Fields: fields}
}

// FieldError is a 400 about one field: "path: message".
func FieldError(code, path, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Status: http.StatusBadRequest, Code: code, Msg: path + ": " + msg, Fields: []api.FieldError{{Path: path, Message: msg}}}
}

// WriteJSON writes v as a JSON answer, indented for people unless v is
// made for machines (a long list in columns: it has a CompactJSON method).
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	if _, compact := v.(interface{ CompactJSON() }); !compact {
		enc.SetIndent("", "  ")
	}
	enc.Encode(v)
}

// WriteError writes an error answer with its code.
func WriteError(w http.ResponseWriter, e *Error) {
	w.Header().Set(ErrorCodeHeader, e.Code) // for the audit log
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(e.RetryAfter/time.Second)))
	}
	WriteJSON(w, e.Status, &api.ErrorResponse{Error: e.Msg, Code: e.Code, Fields: e.Fields})
}

// Fail answers err: an Error as it is, a Reply as it says, anything else
// as a 500 (logged: the server failed, not the request).
func Fail(w http.ResponseWriter, err error, log *slog.Logger) {
	e := Answer(err)
	switch {
	case e.Status >= 500 && e.Code == codeInternal:
		log.Error("request failed", "err", err)
	case e.Warn:
		log.Warn("request failed", "code", e.Code, "err", err)
	}
	WriteError(w, e)
}

const codeInternal = "internal"

// Answer is the Error Fail sends for err.
func Answer(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var r Reply
	if errors.As(err, &r) {
		return r.Reply(err)
	}
	return &Error{Status: http.StatusInternalServerError, Code: codeInternal, Msg: err.Error()}
}
