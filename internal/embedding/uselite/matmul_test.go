package uselite

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestDenseKernels checks both kernels (the assembly one where this machine has it) against a float64
// computation of x·W + b, over shapes that leave every kind of remainder: rows not a multiple of 4 or 2, and
// input widths not a multiple of anything.
func TestDenseKernels(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	kernels := []bool{false}
	if asmKernel {
		kernels = append(kernels, true)
	} else {
		t.Log("no assembly kernel in this build or on this CPU: checking the Go kernel only")
	}
	for _, in := range []int{1, 3, 16, 37, 256} {
		for _, out := range []int{16, 48} {
			w := make([]float32, in*out)
			bias := make([]float32, out)
			for i := range w {
				w[i] = rng.Float32()*2 - 1
			}
			for i := range bias {
				bias[i] = rng.Float32()
			}
			d, err := newDense(w, bias, in, out)
			if err != nil {
				t.Fatal(err)
			}
			for _, rows := range []int{0, 1, 2, 3, 4, 5, 9} {
				x := make([]float32, rows*in)
				for i := range x {
					x[i] = rng.Float32()*2 - 1
				}
				for _, useAsm := range kernels {
					y := make([]float32, rows*out)
					d.applyKernel(y, x, rows, useAsm)
					for r := range rows {
						for j := range out {
							want := float64(bias[j])
							for k := range in {
								want += float64(x[r*in+k]) * float64(w[k*out+j])
							}
							if got := float64(y[r*out+j]); math.Abs(got-want) > 1e-5*float64(in+1) {
								t.Fatalf("in %d out %d rows %d asm %v: y[%d][%d] = %v, want %v", in, out, rows, useAsm, r, j, got, want)
							}
						}
					}
				}
			}
		}
	}
}

func TestNewDenseRejectsBadShapes(t *testing.T) {
	t.Parallel()
	if _, err := newDense(make([]float32, 4*10), make([]float32, 10), 4, 10); err == nil {
		t.Error("10 outputs (not a multiple of 16): no error")
	}
	if _, err := newDense(make([]float32, 5), make([]float32, 16), 4, 16); err == nil {
		t.Error("too few weights: no error")
	}
}
