package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/strata-dev/strata/internal/fieldpath"
	"github.com/strata-dev/strata/internal/suggest"
)

// Problem is one bad field of a document. Path is empty for a problem with
// the document as a whole (not JSON, trailing data, null).
type Problem struct {
	Path    string
	Message string
}

// Errors is every problem Decode found, in document order.
type Errors []Problem

func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, p := range e {
		if p.Path == "" {
			lines[i] = p.Message
		} else {
			lines[i] = p.Path + ": " + p.Message
		}
	}
	return strings.Join(lines, "; ")
}

// maxProblems bounds the problems reported for one body, as the workload
// parser does: past that, more lines help nobody.
const maxProblems = 100

// Decode fills v, a non-nil pointer to a struct, from data. On any problem
// it returns Errors and leaves v as it was.
func Decode(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		panic("strictjson: Decode needs a non-nil pointer")
	}
	w := &walker{dec: json.NewDecoder(bytes.NewReader(data))}
	w.dec.UseNumber()
	if errs := w.document(rv.Type().Elem()); len(errs) > 0 {
		return errs
	}
	fresh := reflect.New(rv.Type().Elem())
	if err := json.Unmarshal(data, fresh.Interface()); err != nil {
		// The walk accepts only what encoding/json can decode; a failure
		// here is a value a type's own UnmarshalJSON refused.
		return Errors{{Message: "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}}
	}
	rv.Elem().Set(fresh.Elem())
	return nil
}

type walker struct {
	dec  *json.Decoder
	errs Errors
}

// errStop ends the walk: the token stream is broken or too many problems
// were found.
var errStop = errors.New("stop")

func (w *walker) fail(path, format string, args ...any) error {
	w.errs = append(w.errs, Problem{Path: path, Message: fmt.Sprintf(format, args...)})
	if len(w.errs) >= maxProblems {
		w.errs = append(w.errs, Problem{Message: fmt.Sprintf("too many problems; stopped after %d", maxProblems)})
		return errStop
	}
	return nil
}

func (w *walker) document(t reflect.Type) Errors {
	tok, err := w.dec.Token()
	switch {
	case errors.Is(err, io.EOF):
		w.fail("", "empty body: want a JSON object")
		return w.errs
	case err != nil:
		w.syntax(err)
		return w.errs
	case tok == nil:
		w.fail("", "expected a JSON object, got null")
		return w.errs
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		w.fail("", "expected a JSON object, got %s", describe(tok))
		return w.errs
	}
	if err := w.object(t, ""); err != nil {
		if !errors.Is(err, errStop) {
			w.syntax(err)
		}
		return w.errs
	}
	if _, err := w.dec.Token(); !errors.Is(err, io.EOF) {
		w.fail("", "unexpected data after the JSON object at byte %d", w.dec.InputOffset())
	}
	return w.errs
}

func (w *walker) syntax(err error) {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		w.fail("", "invalid JSON at byte %d: %s", se.Offset, se.Error())
		return
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		w.fail("", "invalid JSON: unexpected end of the body")
		return
	}
	w.fail("", "invalid JSON: %v", err)
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textType        = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// value checks the value starting with tok against t.
func (w *walker) value(tok json.Token, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if tok == nil {
		return nil // null leaves the field unset; validation decides if that is allowed
	}
	if t == timeType {
		s, ok := tok.(string)
		if !ok {
			return w.mismatch(tok, path, "a time (RFC 3339 string)")
		}
		if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
			return w.fail(path, "expected an RFC 3339 time, got %.64q", s)
		}
		return nil
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textType) {
		return w.skip(tok) // a type that decodes itself
	}
	if d, ok := tok.(json.Delim); ok {
		switch {
		case d == '{' && (t.Kind() == reflect.Struct || t.Kind() == reflect.Map):
			return w.object(t, path)
		case d == '[' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
			return w.array(t, path)
		case t.Kind() == reflect.Interface:
			return w.skip(tok)
		}
		if err := w.mismatch(tok, path, kindName(t)); err != nil {
			return err
		}
		return w.skip(tok)
	}
	switch t.Kind() {
	case reflect.Interface:
		return nil
	case reflect.String:
		if _, ok := tok.(string); !ok {
			return w.mismatch(tok, path, "a string")
		}
	case reflect.Bool:
		if _, ok := tok.(bool); !ok {
			return w.mismatch(tok, path, "true or false")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := tok.(json.Number)
		if !ok {
			return w.mismatch(tok, path, "an integer")
		}
		if _, err := strconv.ParseInt(string(n), 10, t.Bits()); err != nil {
			return w.fail(path, "expected an integer of at most %d bits, got %.64s", t.Bits(), n)
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := tok.(json.Number)
		if !ok {
			return w.mismatch(tok, path, "an unsigned integer")
		}
		if _, err := strconv.ParseUint(string(n), 10, t.Bits()); err != nil {
			return w.fail(path, "expected an unsigned integer of at most %d bits, got %.64s", t.Bits(), n)
		}
	case reflect.Float32, reflect.Float64:
		n, ok := tok.(json.Number)
		if !ok {
			return w.mismatch(tok, path, "a number")
		}
		if _, err := strconv.ParseFloat(string(n), t.Bits()); err != nil {
			return w.fail(path, "number %.64s out of range", n)
		}
	default:
		return w.mismatch(tok, path, kindName(t))
	}
	return nil
}

func (w *walker) mismatch(tok json.Token, path, want string) error {
	return w.fail(path, "expected %s, got %s", want, describe(tok))
}

// object walks the members of an object whose '{' was read.
func (w *walker) object(t reflect.Type, path string) error {
	var fields map[string]reflect.Type
	if t.Kind() == reflect.Struct {
		fields = jsonFields(t)
	}
	seen := map[string]bool{}
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		key := tok.(string) // the decoder guarantees object keys are strings
		p := fieldpath.Join(path, key)
		if seen[key] {
			if err := w.fail(p, "duplicate field"); err != nil {
				return err
			}
		}
		seen[key] = true
		ft := t
		if fields != nil {
			var known bool
			if ft, known = fields[key]; !known {
				if err := w.fail(p, "%s", unknownField(key, fields)); err != nil {
					return err
				}
				if err := w.skipNext(); err != nil {
					return err
				}
				continue
			}
		} else {
			ft = t.Elem() // a map's value
		}
		tok, err = w.dec.Token()
		if err != nil {
			return err
		}
		if err := w.value(tok, ft, p); err != nil {
			return err
		}
	}
	_, err := w.dec.Token() // '}'
	return err
}

func (w *walker) array(t reflect.Type, path string) error {
	for i := 0; w.dec.More(); i++ {
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		if err := w.value(tok, t.Elem(), fieldpath.Index(path, i)); err != nil {
			return err
		}
	}
	_, err := w.dec.Token() // ']'
	return err
}

// skipNext skips the next value; skip skips the rest of the value that
// begins with tok.
func (w *walker) skipNext() error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	return w.skip(tok)
}

func (w *walker) skip(tok json.Token) error {
	d, ok := tok.(json.Delim)
	if !ok || d == '}' || d == ']' {
		return nil
	}
	for depth := 1; depth > 0; {
		tok, err := w.dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}

// unknownField says which field was likely meant: one that differs only in
// case (encoding/json would have matched it silently), a misspelling, or
// another system's word for it.
func unknownField(key string, fields map[string]reflect.Type) string {
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names) // ties go to the first: keep the answer stable
	return "unknown field" + suggest.DidYouMean(key, names)
}

// jsonFields maps a struct's JSON field names to their types, following
// encoding/json's tag rules for the cases this project uses (tags, "-",
// embedded structs).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, shadowed := out[k]; !shadowed {
						out[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func describe(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "a list"
	}
	return fmt.Sprintf("%T", tok)
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return t.Kind().String()
}
