// Package noderef resolves what a person types to name a node — its full
// id, the 8-character id prefix listings print, any unique prefix, or its
// name — to exactly one node, or says why it cannot: no node matches, or
// several do (two agents registered under one name, a prefix too short),
// in which case the error lists the candidates so the person can choose.
// It never picks one of several silently.
//
// The server resolves every node its API is given with it; the CLI uses it
// where it filters a listing by node. It is pure: it reads the nodes it
// is handed and nothing else.
package noderef
