package uselite

import "fmt"

// panelWidth is how many outputs a packed weight panel holds: two 8-float AVX2 registers' worth.
const panelWidth = 16

// dense is a fully connected layer: y = x·W + b.
//
// W is stored packed: the outputs in panels of panelWidth, each panel holding its columns of W row after row
// ([out/16][in][16]). A panel is then one contiguous stream, read front to back for every few input rows, which
// keeps the processor's prefetcher ahead of the multiply-adds even when a panel outgrows the L1 cache. On amd64
// with AVX2 and FMA an assembly kernel computes 4 rows × 16 outputs at a time (matmul_amd64.s, ~70 GFLOP/s on
// one core of the machines Contrail was measured on); elsewhere, or built with -tags purego, plain Go does
// 2 rows × 4 outputs (~5 GFLOP/s).
type dense struct {
	in, out int
	panels  []float32
	bias    []float32 // [out]
}

// newDense packs weights given in the graph's layout, [in][out] row-major.
func newDense(w, bias []float32, in, out int) (dense, error) {
	if out%panelWidth != 0 || len(w) != in*out || len(bias) != out {
		return dense{}, fmt.Errorf("dense layer %d→%d: %d weights and %d biases (outputs must be a multiple of %d)",
			in, out, len(w), len(bias), panelWidth)
	}
	panels := make([]float32, in*out)
	for p := 0; p < out; p += panelWidth {
		for k := range in {
			copy(panels[p*in+k*panelWidth:p*in+(k+1)*panelWidth], w[k*out+p:k*out+p+panelWidth])
		}
	}
	return dense{in: in, out: out, panels: panels, bias: bias}, nil
}

// apply computes dst[r] = src[r]·W + b for rows rows of src ([rows][in]) into dst ([rows][out]).
func (d *dense) apply(dst, src []float32, rows int) {
	d.applyKernel(dst, src, rows, asmKernel)
}

// applyKernel is apply with the choice of kernel made by the caller, so that tests can compare the two.
func (d *dense) applyKernel(dst, src []float32, rows int, useAsm bool) {
	in, out := d.in, d.out
	// The assembly kernel trusts its pointers; these bounds make every address it forms valid.
	if len(src) < rows*in || len(dst) < rows*out {
		panic(fmt.Sprintf("dense %d→%d over %d rows: src %d, dst %d values", in, out, rows, len(src), len(dst)))
	}
	if !useAsm || in == 0 {
		for p := 0; p < out; p += panelWidth {
			panelGo(dst, src, d.panels[p*in:(p+panelWidth)*in], in, out, p, 0, rows)
		}
	} else {
		full := rows / 4 * 4
		for p := 0; p < out; p += panelWidth {
			panel := d.panels[p*in : (p+panelWidth)*in]
			for r := 0; r < full; r += 4 {
				kernel4x16(in, &src[r*in], in, &panel[0], panelWidth, &dst[r*out+p], out)
			}
		}
		if tail := rows - full; tail > 0 {
			// The last one to three rows go through the kernel too, padded with zero rows: the plain Go kernel
			// is an order of magnitude slower, and a single sentence is often 4n+1 pieces long.
			x := make([]float32, 4*in)
			copy(x, src[full*in:rows*in])
			y := make([]float32, 4*out)
			for p := 0; p < out; p += panelWidth {
				kernel4x16(in, &x[0], in, &d.panels[p*in], panelWidth, &y[p], out)
			}
			copy(dst[full*out:rows*out], y)
		}
	}
	for r := range rows {
		y := dst[r*out : (r+1)*out]
		for j, b := range d.bias[:len(y)] {
			y[j] += b
		}
	}
}

// panelGo computes rows [from, to) of the panelWidth outputs starting at p, two rows by four outputs at a time:
// the eight sums stay in registers and each value loaded is used twice or four times.
func panelGo(dst, src, panel []float32, in, out, p, from, to int) {
	r := from
	for ; r+2 <= to; r += 2 {
		x0 := src[r*in : (r+1)*in]
		x1 := src[(r+1)*in : (r+2)*in][:len(x0)]
		for q := 0; q < panelWidth; q += 4 {
			var s00, s01, s02, s03, s10, s11, s12, s13 float32
			off := q
			for k, a := range x0 {
				b := x1[k]
				w := panel[off : off+4 : off+4]
				s00 += a * w[0]
				s01 += a * w[1]
				s02 += a * w[2]
				s03 += a * w[3]
				s10 += b * w[0]
				s11 += b * w[1]
				s12 += b * w[2]
				s13 += b * w[3]
				off += panelWidth
			}
			y0 := dst[r*out+p+q : r*out+p+q+4]
			y1 := dst[(r+1)*out+p+q : (r+1)*out+p+q+4]
			y0[0], y0[1], y0[2], y0[3] = s00, s01, s02, s03
			y1[0], y1[1], y1[2], y1[3] = s10, s11, s12, s13
		}
	}
	for ; r < to; r++ {
		x := src[r*in : (r+1)*in]
		y := dst[r*out+p : r*out+p+panelWidth]
		for j := range y {
			var s float32
			for k, a := range x {
				s += a * panel[k*panelWidth+j]
			}
			y[j] = s
		}
	}
}

// dot is the inner product of a and b[:len(a)], with four partial sums to keep the adds independent.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	k := 0
	for ; k+4 <= len(a); k += 4 {
		s0 += a[k] * b[k]
		s1 += a[k+1] * b[k+1]
		s2 += a[k+2] * b[k+2]
		s3 += a[k+3] * b[k+3]
	}
	for ; k < len(a); k++ {
		s0 += a[k] * b[k]
	}
	return (s0 + s1) + (s2 + s3)
}
