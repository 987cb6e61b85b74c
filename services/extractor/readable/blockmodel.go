package readable

import (
	"bytes"
	_ "embed"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
)

// BlockModel rates the blocks of the content the rules chose: how likely
// a block's words are part of what a reader came for. It is a logistic
// model over hashed features (the block's words, tags, class and id
// words, link density, and its place in the page and in the content),
// trained by the bench module's train-blocks command on a corpus with
// ground truth. A block it rates under the threshold of the page's type
// is dropped.
type BlockModel struct {
	bits uint
	w    []float32
	// Thresholds are the ratings under which a block is dropped, per page
	// type; a type missing here uses Threshold. 0 leaves pages of the type
	// to the rules alone.
	Thresholds map[PageType]float32
	Threshold  float32
}

// Prob is the model's rating of a block with features feats, 0 to 1.
func (m *BlockModel) Prob(feats []uint32) float32 {
	mask := uint32(len(m.w) - 1)
	var z float32
	for _, f := range feats {
		z += m.w[f&mask]
	}
	return float32(1 / (1 + math.Exp(-float64(z))))
}

func (m *BlockModel) threshold(t PageType) float32 {
	if v, ok := m.Thresholds[t]; ok {
		return v
	}
	return m.Threshold
}

// modelMagic starts a model file; its digit changes with the layout, or
// with the features, since weights learned on other features mean nothing.
const modelMagic = "DBM3"

// MarshalBinary encodes m, little-endian: the magic, the fingerprint of
// the features it was trained on, the hash width, the
// default threshold, the per-type thresholds as (length-prefixed type,
// threshold) pairs, then the nonzero weights as (index, weight) pairs.
func (m *BlockModel) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(modelMagic)
	put := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	put(featureFingerprint())
	put(uint32(m.bits))
	put(m.Threshold)
	types := make([]PageType, 0, len(m.Thresholds))
	for t := range m.Thresholds {
		types = append(types, t)
	}
	slices.Sort(types)
	put(uint32(len(types)))
	for _, t := range types {
		b.WriteByte(byte(len(t)))
		b.WriteString(string(t))
		put(m.Thresholds[t])
	}
	nonzero := uint32(0)
	for _, w := range m.w {
		if w != 0 {
			nonzero++
		}
	}
	put(nonzero)
	for i, w := range m.w {
		if w != 0 {
			put(uint32(i))
			put(w)
		}
	}
	return b.Bytes(), nil
}

var errBadModel = errors.New("block model: not a model file, or damaged")

// ErrOtherFeatures is a model trained on features other than those this
// build computes: its weights would mean nothing, so it does not load.
var ErrOtherFeatures = errors.New("block model: trained on other block features than this build's; retrain it with make train-blocks")

// UnmarshalBinary decodes what MarshalBinary wrote.
func (m *BlockModel) UnmarshalBinary(data []byte) error {
	r := bytes.NewReader(data)
	magic := make([]byte, len(modelMagic))
	if _, err := r.Read(magic); err != nil || string(magic) != modelMagic {
		return errBadModel
	}
	get := func(v any) bool { return binary.Read(r, binary.LittleEndian, v) == nil }
	var fingerprint, bits, types, nonzero uint32
	var threshold float32
	if !get(&fingerprint) {
		return errBadModel
	}
	if fingerprint != featureFingerprint() {
		return ErrOtherFeatures
	}
	if !get(&bits) || bits < 8 || bits > 24 || !get(&threshold) || !get(&types) || types > 16 {
		return errBadModel
	}
	thresholds := make(map[PageType]float32, types)
	for range types {
		n, err := r.ReadByte()
		if err != nil {
			return errBadModel
		}
		name := make([]byte, n)
		var v float32
		if _, err := r.Read(name); err != nil || !get(&v) {
			return errBadModel
		}
		thresholds[PageType(name)] = v
	}
	if !get(&nonzero) || nonzero > 1<<bits {
		return errBadModel
	}
	w := make([]float32, 1<<bits)
	for range nonzero {
		var i uint32
		var v float32
		if !get(&i) || i >= 1<<bits || !get(&v) {
			return errBadModel
		}
		w[i] = v
	}
	if r.Len() != 0 {
		return errBadModel
	}
	m.bits, m.w, m.Threshold, m.Thresholds = uint(bits), w, threshold, thresholds
	return nil
}

//go:embed blockmodel.bin
var embeddedModel []byte

// DefaultBlockModel is the model distill ships with, trained on the WCXB
// benchmark's development pages by `make train-blocks`.
var DefaultBlockModel = sync.OnceValue(func() *BlockModel {
	var m BlockModel
	if err := m.UnmarshalBinary(embeddedModel); err != nil {
		// Rating blocks with weights learned on other features would drop
		// content at random: better the rules alone, and
		// TestEmbeddedBlockModelLoads fails such a build.
		return nil
	}
	return &m
})

// Example is one block to learn from: its features, whether its words
// belong to the page's content, and how much it weighs.
type Example struct {
	Features []uint32
	Content  bool
	Weight   float32
}

// TrainConfig sets how TrainBlockModel learns.
type TrainConfig struct {
	Bits        uint    // hash width: 2^Bits weights
	Epochs      int     // passes over the examples
	Alpha, Beta float64 // FTRL learning rate
	L1, L2      float64 // regularisation
	Seed        uint64  // order of the examples in each pass
}

// TrainBlockModel fits a model to examples by FTRL-proximal logistic
// regression, whose L1 term leaves most hashed weights at zero, so the
// model stays small. The same examples and config give the same model.
// Its thresholds are 0.5 until the caller sets them.
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
	m := &BlockModel{bits: cfg.Bits, w: make([]float32, size), Threshold: 0.5}
	for i := range m.w {
		m.w[i] = float32(weight(uint32(i)))
	}
	return m
}
