package predict

import (
	"math"
	"slices"
	"sort"
)

// This file is the learner: gradient boosting of depth-limited regression
// trees on the logistic loss (Friedman 2001; the second-order split gain
// and the learned direction for absent values are XGBoost's, Chen and
// Guestrin 2016), on features cut into at most maxBins bins. It is
// deterministic: rows are visited in order, features in order, and a tie
// between splits keeps the first.

// maxBins bounds the bins of one feature (absent values have their own).
const maxBins = 64

// Tree is one boosted tree. Nodes[0] is the root; a node with Feature < 0
// is a leaf holding Value (a log-odds step).
type Tree struct {
	Nodes []TreeNode `json:"nodes"`
}

// TreeNode is a split (x[Feature] <= Threshold goes Left, above it Right,
// an absent value where AbsentLeft says) or a leaf.
type TreeNode struct {
	Feature    int     `json:"feature"`
	Threshold  float64 `json:"threshold,omitempty"`
	AbsentLeft bool    `json:"absentLeft,omitempty"`
	Left       int     `json:"left,omitempty"`
	Right      int     `json:"right,omitempty"`
	Value      float64 `json:"value,omitempty"`

	bin int // the split's bin in the training data's binning (training only)
}

// eval is the tree's output for feature vector x.
func (t *Tree) eval(x []float64) float64 {
	i := 0
	for {
		n := &t.Nodes[i]
		if n.Feature < 0 {
			return n.Value
		}
		v := x[n.Feature]
		left := n.AbsentLeft
		if !IsAbsent(v) {
			left = v <= n.Threshold
		}
		if left {
			i = n.Left
		} else {
			i = n.Right
		}
	}
}

// BoostConfig tunes the learner.
type BoostConfig struct {
	Rounds       int     // trees
	LearningRate float64 // shrinkage of every leaf
	Depth        int     // 1: stumps, 2: trees of four leaves
	L2           float64 // ridge on leaf values (XGBoost's lambda)
	MinChild     float64 // least hessian weight a leaf may hold
}

// DefaultBoost is the learner the failure model uses (docs/prediction.md
// says why).
var DefaultBoost = BoostConfig{Rounds: 150, LearningRate: 0.1, Depth: 1, L2: 1, MinChild: 0.1}

// binning cuts one feature: a value v falls in bin k when it is at most
// cuts[k] and above cuts[k-1]; values above the last cut fall in
// len(cuts); absent values in absentBin.
type binning struct {
	cuts []float64
}

const absentBin = 255

func (b *binning) bin(v float64) uint8 {
	if IsAbsent(v) {
		return absentBin
	}
	return uint8(sort.SearchFloat64s(b.cuts, v))
}

// newBinning picks the cut points of one feature from its values: every
// distinct value when there are few, otherwise evenly spaced distinct
// values, so that the rare tail (where failures live) keeps resolution
// rather than the bulk at zero.
func newBinning(values []float64) binning {
	var distinct []float64
	for _, v := range values {
		if !IsAbsent(v) {
			distinct = append(distinct, v)
		}
	}
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	if len(distinct) <= maxBins-1 {
		return binning{cuts: distinct}
	}
	cuts := make([]float64, 0, maxBins-1)
	for k := range maxBins - 1 {
		cuts = append(cuts, distinct[(k+1)*len(distinct)/maxBins])
	}
	return binning{cuts: slices.Compact(cuts)}
}

// boostData is a training set cut into bins.
type boostData struct {
	bins    [][]uint8 // [feature][row]
	binning []binning
	label   []float64 // 0 or 1
	weight  []float64
}

func newBoostData(x [][]float64, label []bool, weight []float64) *boostData {
	nf := 0
	if len(x) > 0 {
		nf = len(x[0])
	}
	d := &boostData{bins: make([][]uint8, nf), binning: make([]binning, nf), label: make([]float64, len(x)), weight: weight}
	col := make([]float64, len(x))
	for f := range nf {
		for i := range x {
			col[i] = x[i][f]
		}
		d.binning[f] = newBinning(col)
		d.bins[f] = make([]uint8, len(x))
		for i := range x {
			d.bins[f][i] = d.binning[f].bin(col[i])
		}
	}
	for i, y := range label {
		if y {
			d.label[i] = 1
		}
	}
	return d
}

// boost fits cfg.Rounds trees and returns them with the base log-odds.
func boost(d *boostData, cfg BoostConfig) (base float64, trees []Tree) {
	n := len(d.label)
	var pos, all float64
	for i := range n {
		pos += d.weight[i] * d.label[i]
		all += d.weight[i]
	}
	p0 := min(max(pos/max(all, 1e-12), 1e-6), 1-1e-6)
	base = math.Log(p0 / (1 - p0))
	margin := make([]float64, n)
	for i := range margin {
		margin[i] = base
	}
	grad, hess := make([]float64, n), make([]float64, n)
	rows := make([]int32, n)
	for range cfg.Rounds {
		for i := range n {
			p := sigmoid(margin[i])
			grad[i] = d.weight[i] * (p - d.label[i])
			hess[i] = d.weight[i] * max(p*(1-p), 1e-12)
		}
		for i := range rows {
			rows[i] = int32(i)
		}
		t := Tree{}
		grow(d, cfg, grad, hess, rows, cfg.Depth, &t)
		for i := range n {
			margin[i] += t.evalBinned(d, i)
		}
		trees = append(trees, t)
	}
	return base, trees
}

// evalBinned is eval for row i of the training data (by bins, which agree
// with the thresholds grow wrote).
func (t *Tree) evalBinned(d *boostData, row int) float64 {
	i := 0
	for {
		n := &t.Nodes[i]
		if n.Feature < 0 {
			return n.Value
		}
		b := d.bins[n.Feature][row]
		left := n.AbsentLeft
		if b != absentBin {
			left = int(b) <= n.bin
		}
		if left {
			i = n.Left
		} else {
			i = n.Right
		}
	}
}

// split is the best split of a node.
type split struct {
	feature    int
	bin        int // rows with bin <= bin go left
	absentLeft bool
	gain       float64
}

// grow adds the node for rows to t (a split and its children while depth
// allows and a split gains, else a leaf) and returns its index.
func grow(d *boostData, cfg BoostConfig, grad, hess []float64, rows []int32, depth int, t *Tree) int {
	var g, h float64
	for _, r := range rows {
		g += grad[r]
		h += hess[r]
	}
	idx := len(t.Nodes)
	t.Nodes = append(t.Nodes, TreeNode{Feature: -1, Value: -cfg.LearningRate * g / (h + cfg.L2)})
	if depth == 0 || h < 2*cfg.MinChild {
		return idx
	}
	best := bestSplit(d, cfg, grad, hess, rows, g, h)
	if best.feature < 0 {
		return idx
	}
	var left, right []int32
	for _, r := range rows {
		b := d.bins[best.feature][r]
		if (b == absentBin && best.absentLeft) || (b != absentBin && int(b) <= best.bin) {
			left = append(left, r)
		} else {
			right = append(right, r)
		}
	}
	cuts := d.binning[best.feature].cuts
	threshold := math.Inf(1)
	if best.bin < len(cuts) {
		threshold = cuts[best.bin]
	}
	l := grow(d, cfg, grad, hess, left, depth-1, t)
	r := grow(d, cfg, grad, hess, right, depth-1, t)
	t.Nodes[idx] = TreeNode{Feature: best.feature, Threshold: threshold, AbsentLeft: best.absentLeft, Left: l, Right: r, bin: best.bin}
	return idx
}

// bestSplit scans every feature's histogram for the split with the largest
// gain whose children both hold at least MinChild; feature -1 when none
// gains.
func bestSplit(d *boostData, cfg BoostConfig, grad, hess []float64, rows []int32, g, h float64) split {
	best := split{feature: -1}
	parent := g * g / (h + cfg.L2)
	var hg, hh [maxBins + 1]float64
	for f := range d.bins {
		if len(d.binning[f].cuts) == 0 {
			continue // never reported in the training data: nothing to split
		}
		clear(hg[:])
		clear(hh[:])
		var ag, ah float64
		col := d.bins[f]
		for _, r := range rows {
			b := col[r]
			if b == absentBin {
				ag += grad[r]
				ah += hess[r]
				continue
			}
			hg[b] += grad[r]
			hh[b] += hess[r]
		}
		nb := len(d.binning[f].cuts) + 1
		var lg, lh float64
		for b := range nb - 1 {
			lg += hg[b]
			lh += hh[b]
			for _, absentLeft := range [2]bool{false, true} {
				// Without absent values here, a later absent one goes
				// with the majority (the heavier child), not wherever
				// the loop happened to try first.
				if ah == 0 && absentLeft != (lh >= h-lh) {
					continue
				}
				L, LH := lg, lh
				if absentLeft {
					L, LH = lg+ag, lh+ah
				}
				R, RH := g-L, h-LH
				if LH < cfg.MinChild || RH < cfg.MinChild {
					continue
				}
				gain := L*L/(LH+cfg.L2) + R*R/(RH+cfg.L2) - parent
				if gain > best.gain+1e-12 {
					best = split{feature: f, bin: b, absentLeft: absentLeft, gain: gain}
				}
			}
		}
		// Only absent against present: the split's threshold is +Inf.
		if ah >= cfg.MinChild && h-ah >= cfg.MinChild {
			gain := ag*ag/(ah+cfg.L2) + (g-ag)*(g-ag)/(h-ah+cfg.L2) - parent
			if gain > best.gain+1e-12 {
				best = split{feature: f, bin: nb - 1, absentLeft: false, gain: gain}
			}
		}
	}
	return best
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
