package freeindex

import "math/bits"

// fenwick counts marked positions 0..n-1 and finds the k-th marked one,
// both in O(log n).
type fenwick struct {
	tree []int32 // 1-based
	sum  int
}

func newFenwick(n int) fenwick { return fenwick{tree: make([]int32, n+1)} }

// add marks (d=1) or unmarks (d=-1) position i.
func (f *fenwick) add(i, d int) {
	f.sum += d
	for i++; i < len(f.tree); i += i & -i {
		f.tree[i] += int32(d)
	}
}

func (f *fenwick) total() int { return f.sum }

// find is the position of the k-th marked position (0-based), which must
// exist.
func (f *fenwick) find(k int) int {
	pos, rest := 0, int32(k+1)
	for step := 1 << (bits.Len(uint(len(f.tree)-1)) - 1); step > 0; step >>= 1 {
		if next := pos + step; next < len(f.tree) && f.tree[next] < rest {
			pos = next
			rest -= f.tree[next]
		}
	}
	return pos // 1-based pos+1 holds it, so the 0-based position is pos
}
