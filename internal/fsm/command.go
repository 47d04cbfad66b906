package fsm

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/strata-dev/strata/api"
	"github.com/strata-dev/strata/internal/state"
)

// Type tags a raft log entry: its first byte. Values are persisted in
// every log and snapshot ever written: never renumber one, never reuse
// one (table.go lists them all).
type Type uint8

// Command is one kind of raft entry and everything the FSM does with it:
// its persisted value and name, how its body decodes, how it applies to
// the store, the events it derives, and what it asks of the servers'
// loops once applied (Effects). The table (table.go) holds one Command
// per value; nothing else in the code base dispatches on a command.
type Command struct {
	Value Type
	Name  string

	// body is the Go type a proposer writes (a pointer to it); nil for a
	// command proposers no longer write (decodeOnly).
	body       reflect.Type
	decodeOnly bool
	decode     func(data []byte) (any, error)
	apply      func(w *state.WriteTxn, body any) (answer any, err error)
	events     func(snap *state.Snapshot, body any) []api.Event
	effects    func(body any) Effects
}

// Def is what a table entry says about a command whose body is a T, with
// typed functions; command turns it into a Command.
type Def[T any] struct {
	// Apply applies the body in the entry's transaction and returns the
	// command's answer to its proposer (nil for none). An error aborts the
	// whole entry: nothing of it is written.
	Apply func(w *state.WriteTxn, c *T) (answer any, err error)
	// Events describes what the command is about to do, reading the state
	// before it (nil: none). Deterministic: times come from the body.
	Events func(snap *state.Snapshot, c *T) []api.Event
	// Effects says what the loops must do after the entry applied (nil:
	// nothing).
	Effects func(c *T) Effects
	// Decode reads the entry's body (nil: JSON into a new T).
	Decode func(data []byte) (*T, error)
	// DecodeOnly marks a command old logs hold but proposers no longer
	// write (or write through an encoder of their own, as plan parts):
	// Encode does not pick it for a T.
	DecodeOnly bool
}

// command makes the table entry of value and name from d.
func command[T any](value Type, name string, d Def[T]) Command {
	c := Command{Value: value, Name: name, body: reflect.TypeFor[*T](), decodeOnly: d.DecodeOnly}
	c.decode = func(data []byte) (any, error) {
		if d.Decode != nil {
			return d.Decode(data)
		}
		body := new(T)
		if err := json.Unmarshal(data, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	if d.Apply != nil {
		c.apply = func(w *state.WriteTxn, body any) (any, error) { return d.Apply(w, body.(*T)) }
	}
	c.events = func(snap *state.Snapshot, body any) []api.Event {
		if d.Events == nil {
			return nil
		}
		return d.Events(snap, body.(*T))
	}
	c.effects = func(body any) Effects {
		if d.Effects == nil {
			return Effects{}
		}
		return d.Effects(body.(*T))
	}
	return c
}

// answerless adapts an Apply without an answer.
func answerless[T any](apply func(w *state.WriteTxn, c *T) error) func(*state.WriteTxn, *T) (any, error) {
	return func(w *state.WriteTxn, c *T) (any, error) { return nil, apply(w, c) }
}

// Table is the set of commands, by value and by body type.
type Table struct {
	byValue [256]*Command
	byBody  map[reflect.Type]*Command
	all     []*Command
}

// Errors of a table that cannot be: NewTable refuses it, so the server
// does not start (table.go builds the server's at init).
var (
	ErrDuplicateValue = errors.New("two commands share a value")
	ErrDuplicateName  = errors.New("two commands share a name")
	ErrDuplicateBody  = errors.New("two proposable commands share a body type")
	ErrIncomplete     = errors.New("a command lacks its value, name or Apply")
)

// NewTable checks commands and indexes them: every value (never 0),
// name and proposable body type once, every command with its Apply. Two
// families of commands once took the same value (creating a namespace was
// applied as promoting a deployment); a table like that is refused here.
func NewTable(commands ...Command) (*Table, error) {
	t := &Table{byBody: map[reflect.Type]*Command{}}
	names := map[string]Type{}
	for i := range commands {
		c := &commands[i]
		switch {
		case c.Value == 0 || c.Name == "" || c.apply == nil:
			return nil, fmt.Errorf("%w: %d %q", ErrIncomplete, c.Value, c.Name)
		case t.byValue[c.Value] != nil:
			return nil, fmt.Errorf("%w: %q and %q are both %d", ErrDuplicateValue, t.byValue[c.Value].Name, c.Name, c.Value)
		}
		if other, ok := names[c.Name]; ok {
			return nil, fmt.Errorf("%w: %d and %d are both %q", ErrDuplicateName, other, c.Value, c.Name)
		}
		if !c.decodeOnly {
			if other := t.byBody[c.body]; other != nil {
				return nil, fmt.Errorf("%w: %q and %q both take %s", ErrDuplicateBody, other.Name, c.Name, c.body)
			}
			t.byBody[c.body] = c
		}
		names[c.Name] = c.Value
		t.byValue[c.Value] = c
		t.all = append(t.all, c)
	}
	return t, nil
}

func mustTable(commands ...Command) *Table {
	t, err := NewTable(commands...)
	if err != nil {
		panic(fmt.Sprintf("fsm: the command table: %v", err))
	}
	return t
}

// Commands lists the table's commands in the table's order.
func (t *Table) Commands() []*Command { return t.all }

// Lookup returns the command of value v, nil for none.
func (t *Table) Lookup(v Type) *Command { return t.byValue[v] }

// Name is v's name, "command(N)" for a value no command has.
func (t *Table) Name(v Type) string {
	if c := t.byValue[v]; c != nil {
		return c.Name
	}
	return fmt.Sprintf("command(%d)", uint8(v))
}

// Encode frames body as the entry of its command: the command's value
// byte followed by the body's JSON. body must be a pointer to a command's
// body type.
func (t *Table) Encode(body any) ([]byte, error) {
	c := t.byBody[reflect.TypeOf(body)]
	if c == nil {
		return nil, fmt.Errorf("encode: %T is no command's body", body)
	}
	return c.Encode(body)
}

// Encode frames body (a *T of c) as an entry of c, whatever its
// decodeOnly: tests write old entries with it.
func (c *Command) Encode(body any) ([]byte, error) {
	if reflect.TypeOf(body) != c.body {
		return nil, fmt.Errorf("encode %s: body is %T, want %s", c.Name, body, c.body)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", c.Name, err)
	}
	return append([]byte{byte(c.Value)}, b...), nil
}

// Decode reads an entry into its command and body.
func (t *Table) Decode(entry []byte) (*Command, any, error) {
	if len(entry) == 0 {
		return nil, nil, errors.New("empty entry")
	}
	c := t.byValue[entry[0]]
	if c == nil {
		return nil, nil, fmt.Errorf("unknown command type %d", entry[0])
	}
	body, err := c.decode(entry[1:])
	if err != nil {
		return c, nil, fmt.Errorf("decode %s: %w", c.Name, err)
	}
	return c, body, nil
}
