package uselite

// dense is a fully connected layer: y = x·W + b. The weights are kept transposed (one row of `in` values per
// output) so that every output is a dot product of two contiguous slices, which the kernel below computes two
// inputs by four outputs at a time: the eight sums stay in registers and each value loaded is used twice or four
// times. Written in plain Go, this runs at about 6 GFLOP/s per core on the machines Contrail targets.
type dense struct {
	in, out int
	wt      []float32 // [out][in]
	bias    []float32 // [out]
}

// newDense takes the weights in the graph's layout, [in][out] row-major.
func newDense(w, bias []float32, in, out int) dense {
	wt := make([]float32, in*out)
	for i := range in {
		for j := range out {
			wt[j*in+i] = w[i*out+j]
		}
	}
	return dense{in: in, out: out, wt: wt, bias: bias}
}

// apply computes dst[r] = src[r]·W + b for rows rows of src ([rows][in]) into dst ([rows][out]).
func (d *dense) apply(dst, src []float32, rows int) {
	in, out := d.in, d.out
	r := 0
	for ; r+2 <= rows; r += 2 {
		x0 := src[r*in : r*in+in]
		x1 := src[(r+1)*in : (r+1)*in+in][:len(x0)]
		y0 := dst[r*out : r*out+out]
		y1 := dst[(r+1)*out : (r+1)*out+out][:len(y0)]
		j := 0
		for ; j+4 <= out; j += 4 {
			w0 := d.wt[j*in : j*in+in][:len(x0)]
			w1 := d.wt[(j+1)*in : (j+1)*in+in][:len(x0)]
			w2 := d.wt[(j+2)*in : (j+2)*in+in][:len(x0)]
			w3 := d.wt[(j+3)*in : (j+3)*in+in][:len(x0)]
			var s00, s01, s02, s03, s10, s11, s12, s13 float32
			for k, a := range x0 {
				b := x1[k]
				c0, c1, c2, c3 := w0[k], w1[k], w2[k], w3[k]
				s00 += a * c0
				s01 += a * c1
				s02 += a * c2
				s03 += a * c3
				s10 += b * c0
				s11 += b * c1
				s12 += b * c2
				s13 += b * c3
			}
			bias := d.bias[j : j+4]
			y0[j], y0[j+1], y0[j+2], y0[j+3] = s00+bias[0], s01+bias[1], s02+bias[2], s03+bias[3]
			y1[j], y1[j+1], y1[j+2], y1[j+3] = s10+bias[0], s11+bias[1], s12+bias[2], s13+bias[3]
		}
		for ; j < out; j++ {
			w := d.wt[j*in : j*in+in][:len(x0)]
			y0[j] = dot(x0, w) + d.bias[j]
			y1[j] = dot(x1, w) + d.bias[j]
		}
	}
	for ; r < rows; r++ {
		x := src[r*in : r*in+in]
		y := dst[r*out : r*out+out]
		for j := range y {
			y[j] = dot(x, d.wt[j*in:j*in+in]) + d.bias[j]
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
