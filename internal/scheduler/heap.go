package scheduler

// heapOrder is a binary min-heap's view of its elements by position: the
// candidate heap (selection.go) and each bucket of candidate classes
// (selectclasses.go) sift with the same code. less says whether the
// element at a goes before the one at b; swap exchanges them (and keeps
// any position index of theirs).
type heapOrder interface {
	len() int
	less(a, b int) bool
	swap(a, b int)
}

// heapUp sifts the element at j towards the root.
func heapUp[H heapOrder](h H, j int) {
	for j > 0 {
		parent := (j - 1) / 2
		if !h.less(j, parent) {
			return
		}
		h.swap(j, parent)
		j = parent
	}
}

// heapDown sifts the element at j towards the leaves and reports whether
// it moved.
func heapDown[H heapOrder](h H, j int) bool {
	n, start := h.len(), j
	for {
		child := 2*j + 1
		if child >= n {
			break
		}
		if r := child + 1; r < n && h.less(r, child) {
			child = r
		}
		if !h.less(child, j) {
			break
		}
		h.swap(j, child)
		j = child
	}
	return j > start
}

// heapFix restores the heap after the element at j changed.
func heapFix[H heapOrder](h H, j int) {
	if !heapDown(h, j) {
		heapUp(h, j)
	}
}

// heapInit makes a heap of any order of the elements.
func heapInit[H heapOrder](h H) {
	for j := h.len()/2 - 1; j >= 0; j-- {
		heapDown(h, j)
	}
}
