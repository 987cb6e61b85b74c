package readable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
)

// forest is a gradient-boosted ensemble of small regression trees over a
// block's dense features; its output, through the logistic function, is
// the chance that the block is content.
type forest struct {
	base  float32
	trees [][]treeNode
}

// treeNode is a split (feat >= 0: go right when x[feat] > thr) or a leaf
// (feat < 0) holding value.
type treeNode struct {
	feat        int16
	thr         float32
	left, right int32
	value       float32
}

func (f *forest) score(x []float32) float32 {
	z := f.base
	for _, t := range f.trees {
		i := int32(0)
		for t[i].feat >= 0 {
			if x[t[i].feat] > t[i].thr {
				i = t[i].right
			} else {
				i = t[i].left
			}
		}
		z += t[i].value
	}
	return z
}

func (f *forest) marshal(b *bytes.Buffer) {
	binary.Write(b, binary.LittleEndian, f.base)
	binary.Write(b, binary.LittleEndian, uint32(len(f.trees)))
	for _, t := range f.trees {
		binary.Write(b, binary.LittleEndian, uint32(len(t)))
		for _, n := range t {
			binary.Write(b, binary.LittleEndian, n.feat)
			binary.Write(b, binary.LittleEndian, n.thr)
			binary.Write(b, binary.LittleEndian, n.left)
			binary.Write(b, binary.LittleEndian, n.right)
			binary.Write(b, binary.LittleEndian, n.value)
		}
	}
}

var errBadForest = errors.New("block model: truncated or inconsistent trees")

func (f *forest) unmarshal(r *bytes.Reader, features int) error {
	var count uint32
	if binary.Read(r, binary.LittleEndian, &f.base) != nil || binary.Read(r, binary.LittleEndian, &count) != nil || count > 10000 {
		return errBadForest
	}
	f.trees = make([][]treeNode, count)
	for i := range f.trees {
		var size uint32
		if binary.Read(r, binary.LittleEndian, &size) != nil || size == 0 || size > 1<<16 {
			return errBadForest
		}
		t := make([]treeNode, size)
		for j := range t {
			n := &t[j]
			for _, v := range []any{&n.feat, &n.thr, &n.left, &n.right, &n.value} {
				if binary.Read(r, binary.LittleEndian, v) != nil {
					return errBadForest
				}
			}
		}
		// Every split points forward to nodes of this tree and reads a
		// feature the model has, so scoring cannot loop or index out of range.
		for j, n := range t {
			if n.feat >= 0 && (int(n.feat) >= features || n.left <= int32(j) || n.right <= int32(j) || int(n.left) >= len(t) || int(n.right) >= len(t)) {
				return errBadForest
			}
		}
		f.trees[i] = t
	}
	return nil
}

// BoostConfig sets how the trees are grown.
type BoostConfig struct {
	Trees    int     // rounds of boosting
	Depth    int     // levels of splits per tree
	Rate     float64 // shrinkage of each tree's values
	Lambda   float64 // L2 penalty on leaf values
	MinHess  float64 // least hessian weight in a leaf
	Bins     int     // candidate thresholds per feature
	Features int     // width of each example's vector
}

// growForest fits a logistic forest to xs (one vector per example), ys and
// weights ws, by second-order gradient boosting with histogram splits.
// init, when not nil, are margins another model already gives each
// example: the forest then fits what they leave, from a base of zero.
func growForest(xs [][]float32, ys []bool, ws []float32, init []float64, cfg BoostConfig) *forest {
	n, nf := len(xs), cfg.Features
	// Candidate thresholds per feature: quantiles of its values.
	edges := make([][]float32, nf)
	for j := range nf {
		vals := make([]float32, n)
		for i := range xs {
			vals[i] = xs[i][j]
		}
		slices.Sort(vals)
		vals = slices.Compact(vals)
		if len(vals) <= cfg.Bins {
			if len(vals) > 1 {
				edges[j] = vals[:len(vals)-1]
			}
			continue
		}
		for b := 1; b < cfg.Bins; b++ {
			v := vals[b*len(vals)/cfg.Bins]
			if len(edges[j]) == 0 || edges[j][len(edges[j])-1] != v {
				edges[j] = append(edges[j], v)
			}
		}
	}
	// bins[i*nf+j]: the first edge x[j] does not exceed.
	bins := make([]uint8, n*nf)
	for i, x := range xs {
		for j := range nf {
			b, _ := slices.BinarySearch(edges[j], x[j])
			bins[i*nf+j] = uint8(b)
		}
	}
	var pos, all float64
	for i := range ys {
		all += float64(ws[i])
		if ys[i] {
			pos += float64(ws[i])
		}
	}
	p0 := min(max(pos/all, 1e-6), 1-1e-6)
	f := &forest{base: float32(math.Log(p0 / (1 - p0)))}
	if init != nil {
		f.base = 0
	}
	z := make([]float64, n)
	for i := range z {
		z[i] = float64(f.base)
		if init != nil {
			z[i] = init[i]
		}
	}
	g := make([]float64, n)
	h := make([]float64, n)
	idx := make([]int32, n)
	for range cfg.Trees {
		for i := range n {
			p := 1 / (1 + math.Exp(-z[i]))
			y := 0.0
			if ys[i] {
				y = 1
			}
			g[i] = (p - y) * float64(ws[i])
			h[i] = max(p*(1-p), 1e-6) * float64(ws[i])
			idx[i] = int32(i)
		}
		t := growTree(idx, bins, edges, g, h, cfg)
		for i, x := range xs {
			z[i] += float64(leafValue(t, x))
		}
		f.trees = append(f.trees, t)
	}
	return f
}

func leafValue(t []treeNode, x []float32) float32 {
	i := int32(0)
	for t[i].feat >= 0 {
		if x[t[i].feat] > t[i].thr {
			i = t[i].right
		} else {
			i = t[i].left
		}
	}
	return t[i].value
}

// growTree grows one tree breadth first over the examples idx.
func growTree(idx []int32, bins []uint8, edges [][]float32, g, h []float64, cfg BoostConfig) []treeNode {
	nf := cfg.Features
	type job struct {
		node  int32
		idx   []int32
		depth int
	}
	tree := []treeNode{{feat: -1}}
	queue := []job{{0, idx, 0}}
	gh := make([]float64, 2*256)
	for len(queue) > 0 {
		jb := queue[0]
		queue = queue[1:]
		var G, H float64
		for _, i := range jb.idx {
			G += g[i]
			H += h[i]
		}
		tree[jb.node].value = float32(-G / (H + cfg.Lambda) * cfg.Rate)
		if jb.depth == cfg.Depth || H < 2*cfg.MinHess {
			continue
		}
		parent := G * G / (H + cfg.Lambda)
		bestGain, bestF, bestB := 1e-9, -1, 0
		for j := range nf {
			nb := len(edges[j]) + 1
			if nb < 2 {
				continue
			}
			clear(gh[:2*nb])
			for _, i := range jb.idx {
				b := bins[int(i)*nf+j]
				gh[2*b] += g[i]
				gh[2*b+1] += h[i]
			}
			var gl, hl float64
			for b := 0; b < nb-1; b++ {
				gl += gh[2*b]
				hl += gh[2*b+1]
				gr, hr := G-gl, H-hl
				if hl < cfg.MinHess || hr < cfg.MinHess {
					continue
				}
				gain := gl*gl/(hl+cfg.Lambda) + gr*gr/(hr+cfg.Lambda) - parent
				if gain > bestGain {
					bestGain, bestF, bestB = gain, j, b
				}
			}
		}
		if bestF < 0 {
			continue
		}
		var left, right []int32
		for _, i := range jb.idx {
			if int(bins[int(i)*nf+bestF]) <= bestB {
				left = append(left, i)
			} else {
				right = append(right, i)
			}
		}
		l, r := int32(len(tree)), int32(len(tree)+1)
		tree = append(tree, treeNode{feat: -1}, treeNode{feat: -1})
		tree[jb.node].feat = int16(bestF)
		tree[jb.node].thr = edges[bestF][bestB]
		tree[jb.node].left, tree[jb.node].right = l, r
		queue = append(queue, job{l, left, jb.depth + 1}, job{r, right, jb.depth + 1})
	}
	return tree
}
