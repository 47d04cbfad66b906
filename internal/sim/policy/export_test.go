package policy

// WithoutIndex makes sel scan every node on every placement: the reference
// the indexed placements are compared with.
func (sel *Selector) WithoutIndex() *Selector {
	sel.noIndex = true
	return sel
}
