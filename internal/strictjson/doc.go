// Package strictjson decodes one JSON request body into a Go value the way
// an API edge must: exactly one JSON object, nothing after it, no null in
// its place, only the fields the target type declares (exact case, each
// once), every value of the declared type and range. Each problem is
// reported with the field's full path (updates[2].taskStates.web.state),
// all of them at once, so that a 400 can name every bad field.
//
// encoding/json alone accepts trailing data (after Decoder.Decode), null,
// case-folded and duplicate keys, and reports type errors without indices.
// strictjson walks the tokens against the target type first and only then
// lets encoding/json fill the value, so the two never disagree on what was
// accepted. It must stay free of HTTP and of any API type: callers turn
// its Errors into their own responses.
package strictjson
