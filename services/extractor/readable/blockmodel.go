package readable

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
)

// BlockModel rates each block of the content the rules chose: how likely
// its words are part of what a reader came for. It is a logistic model over
// hashed features, small enough to embed and a few additions per feature
// to apply.
type BlockModel struct {
	bits uint
	w    []float32
	// trees, when present, add their score to the weights'.
	trees *forest
	// Threshold is the rating under which a block is dropped.
	Threshold float32
}

// Prob is the model's rating of a block with features feats, 0 to 1.
func (m *BlockModel) Prob(feats []uint32, x []float32) float32 {
	mask := uint32(len(m.w) - 1)
	var z float32
	for _, f := range feats {
		z += m.w[f&mask]
	}
	if m.trees != nil {
		z += m.trees.score(x)
	}
	return float32(1 / (1 + math.Exp(-float64(z))))
}

func (m *BlockModel) rate(b textBlock) float32 { return m.Prob(b.feats, b.x) }

const modelMagic = "DBM2"

// MarshalBinary encodes m: a magic, the hash width, the threshold, and
// the weights as float16-free float32 little-endian, nonzero ones only.
func (m *BlockModel) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(modelMagic)
	binary.Write(&b, binary.LittleEndian, uint32(m.bits))
	binary.Write(&b, binary.LittleEndian, m.Threshold)
	nonzero := uint32(0)
	for _, w := range m.w {
		if w != 0 {
			nonzero++
		}
	}
	binary.Write(&b, binary.LittleEndian, nonzero)
	for i, w := range m.w {
		if w != 0 {
			binary.Write(&b, binary.LittleEndian, uint32(i))
			binary.Write(&b, binary.LittleEndian, w)
		}
	}
	if m.trees == nil {
		b.WriteByte(0)
		return b.Bytes(), nil
	}
	b.WriteByte(1)
	binary.Write(&b, binary.LittleEndian, uint32(xFeatures))
	m.trees.marshal(&b)
	return b.Bytes(), nil
}

// UnmarshalBinary decodes what MarshalBinary wrote.
func (m *BlockModel) UnmarshalBinary(data []byte) error {
	r := bytes.NewReader(data)
	magic := make([]byte, 4)
	if _, err := r.Read(magic); err != nil || string(magic) != modelMagic {
		return errors.New("block model: not a model file")
	}
	var bits, nonzero uint32
	var threshold float32
	if err := binary.Read(r, binary.LittleEndian, &bits); err != nil || bits < 8 || bits > 24 {
		return errors.New("block model: bad hash width")
	}
	if err := binary.Read(r, binary.LittleEndian, &threshold); err != nil {
		return fmt.Errorf("block model: %w", err)
	}
	if err := binary.Read(r, binary.LittleEndian, &nonzero); err != nil || nonzero > 1<<bits {
		return errors.New("block model: bad weight count")
	}
	w := make([]float32, 1<<bits)
	for range nonzero {
		var i uint32
		var v float32
		if err := binary.Read(r, binary.LittleEndian, &i); err != nil || i >= 1<<bits {
			return errors.New("block model: truncated or bad weight")
		}
		if err := binary.Read(r, binary.LittleEndian, &v); err != nil {
			return errors.New("block model: truncated weight")
		}
		w[i] = v
	}
	m.bits, m.w, m.Threshold = uint(bits), w, threshold
	hasTrees, err := r.ReadByte()
	if err != nil || hasTrees > 1 {
		return errors.New("block model: truncated")
	}
	if hasTrees == 1 {
		var features uint32
		if err := binary.Read(r, binary.LittleEndian, &features); err != nil || features != xFeatures {
			return errors.New("block model: trained on other features than this build computes")
		}
		m.trees = &forest{}
		if err := m.trees.unmarshal(r, xFeatures); err != nil {
			return err
		}
	}
	if r.Len() != 0 {
		return errors.New("block model: trailing bytes")
	}
	return nil
}

//go:embed blockmodel.bin
var embeddedModel []byte

// DefaultBlockModel is the model trained on the benchmark's development
// pages that distill ships with, or nil when the build carries none.
var DefaultBlockModel = sync.OnceValue(func() *BlockModel {
	if len(embeddedModel) == 0 {
		return nil
	}
	var m BlockModel
	if err := m.UnmarshalBinary(embeddedModel); err != nil {
		panic("readable: embedded block model: " + err.Error())
	}
	return &m
})

// Example is one block to learn from: its features, whether its words
// belong to the page's content, and how much it weighs.
type Example struct {
	Features []uint32
	Dense    []float32
	Content  bool
	Weight   float32
}

// TrainConfig sets how TrainBlockModel learns.
type TrainConfig struct {
	Bits        uint    // hash width: 2^Bits weights
	Epochs      int     // passes over the examples
	Alpha, Beta float64 // FTRL learning rate
	L1, L2      float64 // regularisation
	Threshold   float32 // the model's drop threshold
	Seed        uint64  // order of the examples in each pass
	// Boost, when it has trees, grows a forest on the dense features
	// that fits what the weights leave.
	Boost BoostConfig
}

// TrainBlockModel fits a model to examples by FTRL-proximal logistic
// regression, whose L1 term leaves most hashed weights at zero, so the
// model stays small. The same examples and config give the same model.
func TrainBlockModel(examples []Example, cfg TrainConfig) *BlockModel {
	size := 1 << cfg.Bits
	mask := uint32(size - 1)
	z := make([]float64, size)
	n := make([]float64, size)
	weight := func(i uint32) float64 {
		zi := z[i]
		if math.Abs(zi) <= cfg.L1 {
			return 0
		}
		sign := 1.0
		if zi < 0 {
			sign = -1
		}
		return -(zi - sign*cfg.L1) / ((cfg.Beta+math.Sqrt(n[i]))/cfg.Alpha + cfg.L2)
	}
	order := make([]int, len(examples))
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	idx := make([]uint32, 0, 128)
	ws := make([]float64, 0, 128)
	for range cfg.Epochs {
		rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, k := range order {
			ex := &examples[k]
			idx, ws = idx[:0], ws[:0]
			var dot float64
			for _, f := range ex.Features {
				i := f & mask
				w := weight(i)
				idx = append(idx, i)
				ws = append(ws, w)
				dot += w
			}
			p := 1 / (1 + math.Exp(-max(min(dot, 35), -35)))
			y := 0.0
			if ex.Content {
				y = 1
			}
			g := (p - y) * float64(ex.Weight)
			for j, i := range idx {
				sigma := (math.Sqrt(n[i]+g*g) - math.Sqrt(n[i])) / cfg.Alpha
				z[i] += g - sigma*ws[j]
				n[i] += g * g
			}
		}
	}
	m := &BlockModel{bits: cfg.Bits, w: make([]float32, size), Threshold: cfg.Threshold}
	if cfg.Epochs > 0 {
		for i := range m.w {
			m.w[i] = float32(weight(uint32(i)))
		}
	}
	if cfg.Boost.Trees > 0 {
		xs := make([][]float32, len(examples))
		ys := make([]bool, len(examples))
		ws := make([]float32, len(examples))
		for i, ex := range examples {
			xs[i], ys[i], ws[i] = ex.Dense, ex.Content, ex.Weight
		}
		var init []float64
		if cfg.Epochs > 0 {
			init = make([]float64, len(examples))
			for i, ex := range examples {
				for _, f := range ex.Features {
					init[i] += float64(m.w[f&uint32(size-1)])
				}
			}
		}
		b := cfg.Boost
		b.Features = xFeatures
		m.trees = growForest(xs, ys, ws, init, b)
	}
	return m
}
