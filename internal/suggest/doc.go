// Package suggest finds the name a user most likely meant when they wrote
// one that is not known: a misspelling ("comand" for "command"), a
// difference of case ("Replicas"), or the word another system uses for the
// same thing ("count", Nomad's name for "replicas"). Field decoders, the
// CLI's config files and its flag values use it to add "did you mean …?"
// to an error.
//
// It is pure: no I/O, no state. It never suggests a name that is not in the
// list it is given, so a suggestion is always valid where it is offered.
package suggest
