package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

type state struct {
	State string    `json:"state"`
	PID   int       `json:"pid,omitempty"`
	At    time.Time `json:"at,omitempty"`
}

type update struct {
	ID     string            `json:"id"`
	States map[string]*state `json:"taskStates,omitempty"`
	Tags   []string          `json:"tags,omitempty"`
	Size   int64             `json:"size"`
	Ratio  float64           `json:"ratio"`
	OK     bool              `json:"ok"`
	Wait   time.Duration     `json:"wait"`
	Extra  any               `json:"extra,omitempty"`
	hidden int
}

type request struct {
	Updates []*update `json:"updates"`
	Count   uint8     `json:"count"`
}

func TestDecodeAccepts(t *testing.T) {
	var r request
	err := Decode([]byte(`{"updates": [{"id": "a", "taskStates": {"web": {"state": "running", "pid": 7, "at": "2026-01-02T03:04:05Z"}},
		"tags": ["x"], "size": 9223372036854775807, "ratio": 1.5e3, "ok": true, "wait": 5, "extra": {"any": [1, {"thing": null}]}}, null], "count": 255}`+"\n\t "), &r)
	if err != nil {
		t.Fatal(err)
	}
	want := request{Count: 255, Updates: []*update{{ID: "a", States: map[string]*state{"web": {State: "running", PID: 7, At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}},
		Tags: []string{"x"}, Size: 9223372036854775807, Ratio: 1500, OK: true, Wait: 5, Extra: map[string]any{"any": []any{1.0, map[string]any{"thing": nil}}}}, nil}}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got %+v\nwant %+v", r, want)
	}
}

func TestDecodeProblems(t *testing.T) {
	tests := []struct {
		name, body string
		paths      []string
		msg        string
	}{
		{"empty", ``, []string{""}, "empty body"},
		{"null", `null`, []string{""}, "got null"},
		{"a list", `[]`, []string{""}, "got a list"},
		{"trailing garbage", `{"count": 1} {"count": 2}`, []string{""}, "unexpected data after the JSON object"},
		{"trailing text", `{"count": 1}garbage`, []string{""}, "after the JSON object"},
		{"syntax", `{"count": 1,}`, []string{""}, "invalid JSON"},
		{"truncated", `{"updates": [{"id": "a"`, []string{""}, "invalid JSON"},
		{"unknown field", `{"updates": [{"id": "a", "bogus": {"deep": [1]}}]}`, []string{"updates[0].bogus"}, "unknown field"},
		{"case folded", `{"Updates": []}`, []string{"Updates"}, `did you mean "updates"`},
		{"misspelt", `{"updates": [{"taskStaes": {}}]}`, []string{"updates[0].taskStaes"}, `unknown field (did you mean "taskStates"?)`},
		{"unexported", `{"updates": [{"hidden": 1}]}`, []string{"updates[0].hidden"}, "unknown field"},
		{"duplicate", `{"count": 1, "count": 2}`, []string{"count"}, "duplicate field"},
		{"type in a map", `{"updates": [{"taskStates": {"web": {"state": 3}}}]}`, []string{"updates[0].taskStates.web.state"}, "expected a string, got a number"},
		{"odd map key", `{"updates": [{"taskStates": {"a b": {"pid": "x"}}}]}`, []string{`updates[0].taskStates["a b"].pid`}, "expected an integer"},
		{"out of range", `{"count": 256}`, []string{"count"}, "at most 8 bits"},
		{"negative unsigned", `{"count": -1}`, []string{"count"}, "unsigned"},
		{"fraction for an integer", `{"updates": [{"size": 1.5}]}`, []string{"updates[0].size"}, "integer"},
		{"float out of range", `{"updates": [{"ratio": 1e400}]}`, []string{"updates[0].ratio"}, "out of range"},
		{"object for a list", `{"updates": {}}`, []string{"updates"}, "expected a list, got an object"},
		{"bad time", `{"updates": [{"taskStates": {"w": {"at": "yesterday"}}}]}`, []string{"updates[0].taskStates.w.at"}, "RFC 3339"},
		{"several", `{"count": "x", "updates": [{"id": 1}, {"ok": "yes"}]}`, []string{"count", "updates[0].id", "updates[1].ok"}, "expected"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := request{Count: 7}
			err := Decode([]byte(tt.body), &r)
			var errs Errors
			if !errors.As(err, &errs) {
				t.Fatalf("err = %v, want Errors", err)
			}
			var paths []string
			for _, p := range errs {
				paths = append(paths, p.Path)
			}
			if !reflect.DeepEqual(paths, tt.paths) {
				t.Fatalf("paths %q, want %q (%v)", paths, tt.paths, err)
			}
			if !strings.Contains(errs[0].Message, tt.msg) {
				t.Fatalf("message %q does not say %q", errs[0].Message, tt.msg)
			}
			if r.Count != 7 {
				t.Fatal("a refused body changed the target")
			}
		})
	}
}

func TestDecodeBoundsProblems(t *testing.T) {
	body := `{"updates": [` + strings.Repeat(`{"bad": 1},`, 500) + `{}]}`
	var errs Errors
	if !errors.As(Decode([]byte(body), &request{}), &errs) || len(errs) != maxProblems+1 {
		t.Fatalf("got %d problems, want %d and a last line", len(errs), maxProblems+1)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"updates": [{"id": "a", "taskStates": {"web": {"state": "running"}}}]}`))
	f.Add([]byte(`{"count": 1} x`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r request
		err := Decode(data, &r)
		var lenient request
		if err == nil {
			// Strict is a subset of encoding/json, and what it accepts
			// round-trips.
			if lerr := json.Unmarshal(data, &lenient); lerr != nil {
				t.Fatalf("accepted what encoding/json refuses: %v", lerr)
			}
			if !reflect.DeepEqual(r, lenient) {
				t.Fatalf("decoded %+v, encoding/json %+v", r, lenient)
			}
			again, merr := json.Marshal(r)
			if merr != nil {
				t.Fatal(merr)
			}
			var back request
			if err := Decode(again, &back); err != nil {
				t.Fatalf("re-encoded %s does not decode: %v", again, err)
			}
			if twice, _ := json.Marshal(back); !bytes.Equal(twice, again) {
				t.Fatalf("re-encoded %s decodes to %s", again, twice)
			}
			return
		}
		var errs Errors
		if !errors.As(err, &errs) || len(errs) == 0 {
			t.Fatalf("error %T %v is not a non-empty Errors", err, err)
		}
		for _, p := range errs {
			if p.Message == "" {
				t.Fatalf("problem without a message at %q", p.Path)
			}
		}
	})
}
