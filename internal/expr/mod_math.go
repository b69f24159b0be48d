package expr

import (
	"errors"
	"fmt"
	"math"
	"sort"

	smath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
)

// mathBuiltins are math (Starlark's, with Python's domain errors where Starlark would answer nan) and
// statistics.
func mathBuiltins() starlark.StringDict {
	m := starlark.StringDict{}
	for k, v := range smath.Module.Members {
		m[k] = v
	}
	for _, name := range []string{"sqrt", "log10", "log2"} {
		m[name] = fn("math."+name, domainChecked(name, m[name]))
	}
	m["log"] = fn("math.log", mathLog)
	m["isclose"] = fn("math.isclose", mathIsclose)
	for _, name := range []string{"isinf", "isnan", "isfinite"} {
		m[name] = fn("math."+name, mathClassify)
	}
	m["inf"], m["nan"] = starlark.Float(math.Inf(1)), starlark.Float(math.NaN())
	return starlark.StringDict{
		"math": newModule("math", m),
		"statistics": newModule("statistics", starlark.StringDict{
			"mean":           fn("statistics.mean", statMean),
			"fmean":          fn("statistics.fmean", statMean),
			"median":         fn("statistics.median", statMedian),
			"median_low":     fn("statistics.median_low", statMedian),
			"median_high":    fn("statistics.median_high", statMedian),
			"mode":           fn("statistics.mode", statMode),
			"stdev":          fn("statistics.stdev", statSpread),
			"pstdev":         fn("statistics.pstdev", statSpread),
			"variance":       fn("statistics.variance", statSpread),
			"pvariance":      fn("statistics.pvariance", statSpread),
			"geometric_mean": fn("statistics.geometric_mean", statGeometricMean),
			"quantiles":      fn("statistics.quantiles", statQuantiles),
		}),
	}
}

// domainChecked refuses a negative argument (and zero for the logarithms), as Python's math does.
func domainChecked(name string, inner starlark.Value) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var x floatArg
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &x); err != nil {
			return nil, err
		}
		if x < 0 || x == 0 && name != "sqrt" {
			return nil, fmt.Errorf("%s: math domain error (%s of %v)", b.Name(), name, x)
		}
		return starlark.Call(th, inner, args, kwargs)
	}
}

func mathLog(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x floatArg
	var base starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &x, &base); err != nil {
		return nil, err
	}
	if x <= 0 {
		return nil, fmt.Errorf("math.log: math domain error (log of %v)", x)
	}
	if base == nil {
		return starlark.Float(math.Log(float64(x))), nil
	}
	bf, ok := starlark.AsFloat(base)
	if !ok || bf <= 0 || bf == 1 {
		return nil, errors.New("math.log: the base must be a positive number other than 1")
	}
	return starlark.Float(math.Log(float64(x)) / math.Log(bf)), nil
}

func mathIsclose(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y floatArg
	var rel, abs floatArg = 1e-9, 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "a", &x, "b", &y, "rel_tol?", &rel, "abs_tol?", &abs); err != nil {
		return nil, err
	}
	if x == y {
		return starlark.True, nil
	}
	d := math.Abs(float64(x - y))
	return starlark.Bool(d <= math.Max(float64(rel)*math.Max(math.Abs(float64(x)), math.Abs(float64(y))), float64(abs))), nil
}

// floatArg is a float argument that may be given as an int, as Python's math takes it.
type floatArg float64

func (n *floatArg) Unpack(v starlark.Value) error {
	if b, ok := v.(starlark.Bool); ok {
		v = boolInt(b)
	}
	f, ok := starlark.AsFloat(v)
	if !ok {
		return fmt.Errorf("got %s, want a number", v.Type())
	}
	*n = floatArg(f)
	return nil
}

// numbers reads the data of a statistics function: ints stay exact, so that mean([1, 2, 3]) is 2 as in
// Python.
func numbers(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple, min int) ([]starlark.Value, []float64, bool, error) {
	if len(args) < 1 {
		return nil, nil, false, fmt.Errorf("%s: missing the data argument", b.Name())
	}
	items, err := iterate(th, args[0], b.Name())
	if err != nil {
		return nil, nil, false, err
	}
	if len(items) < min {
		return nil, nil, false, fmt.Errorf("%s requires at least %d data points", b.Name(), min)
	}
	fs := make([]float64, len(items))
	allInt := true
	for i, v := range items {
		if bv, ok := v.(starlark.Bool); ok {
			v = boolInt(bv)
			items[i] = v
		}
		f, ok := starlark.AsFloat(v)
		if !ok {
			return nil, nil, false, fmt.Errorf("%s: the data must be numbers, not %s", b.Name(), v.Type())
		}
		_, isInt := v.(starlark.Int)
		allInt = allInt && isInt
		fs[i] = f
	}
	return items, fs, allInt, nil
}

func statMean(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	items, fs, allInt, err := numbers(th, b, args, kwargs, 1)
	if err != nil {
		return nil, err
	}
	if allInt && b.Name() == "statistics.mean" {
		total := starlark.MakeInt(0)
		for _, v := range items {
			total = total.Add(v.(starlark.Int))
		}
		n := starlark.MakeInt(len(items))
		if q, r := total.Div(n), total.Mod(n); r.Sign() == 0 {
			return q, nil
		}
	}
	return starlark.Float(mean(fs)), nil
}

func mean(fs []float64) float64 {
	s := 0.0
	for _, f := range fs {
		s += f
	}
	return s / float64(len(fs))
}

func statMedian(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	items, fs, _, err := numbers(th, b, args, kwargs, 1)
	if err != nil {
		return nil, err
	}
	idx := make([]int, len(fs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return fs[idx[i]] < fs[idx[j]] })
	n := len(idx)
	if n%2 == 1 {
		return items[idx[n/2]], nil
	}
	lo, hi := idx[n/2-1], idx[n/2]
	switch b.Name() {
	case "statistics.median_low":
		return items[lo], nil
	case "statistics.median_high":
		return items[hi], nil
	}
	return starlark.Float((fs[lo] + fs[hi]) / 2), nil
}

// statMode is the most common value (the first seen among equals), of any hashable type.
func statMode(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) != 1 || len(kwargs) > 0 {
		return nil, fmt.Errorf("%s takes one argument, the data", b.Name())
	}
	items, err := iterate(th, args[0], b.Name())
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, errors.New("statistics.mode: no mode for empty data")
	}
	counts := starlark.NewDict(len(items))
	var best starlark.Value
	bestN := 0
	for _, v := range items {
		c, found, err := counts.Get(v)
		if err != nil {
			return nil, err
		}
		n := 1
		if found {
			n = int(c.(starlark.Int).BigInt().Int64()) + 1
		}
		_ = counts.SetKey(v, starlark.MakeInt(n))
		if n > bestN {
			best, bestN = v, n
		}
	}
	return best, nil
}

// statSpread is the sample (stdev, variance) or population (pstdev, pvariance) spread.
func statSpread(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	sample := b.Name() == "statistics.stdev" || b.Name() == "statistics.variance"
	min := 1
	if sample {
		min = 2
	}
	_, fs, _, err := numbers(th, b, args, kwargs, min)
	if err != nil {
		return nil, err
	}
	m := mean(fs)
	ss := 0.0
	for _, f := range fs {
		ss += (f - m) * (f - m)
	}
	n := float64(len(fs))
	if sample {
		n--
	}
	v := ss / n
	if b.Name() == "statistics.stdev" || b.Name() == "statistics.pstdev" {
		v = math.Sqrt(v)
	}
	return starlark.Float(v), nil
}

func statGeometricMean(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	_, fs, _, err := numbers(th, b, args, kwargs, 1)
	if err != nil {
		return nil, err
	}
	s := 0.0
	for _, f := range fs {
		if f <= 0 {
			return nil, errors.New("statistics.geometric_mean requires a non-empty dataset containing positive numbers")
		}
		s += math.Log(f)
	}
	return starlark.Float(math.Exp(s / float64(len(fs)))), nil
}

// statQuantiles is statistics.quantiles(data, n=4) with Python's default "exclusive" method.
func statQuantiles(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var data starlark.Value
	n := 4
	method := "exclusive"
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "data", &data, "n?", &n, "method?", &method); err != nil {
		return nil, err
	}
	_, fs, _, err := numbers(th, b, starlark.Tuple{data}, nil, 2)
	if err != nil {
		return nil, err
	}
	if n < 1 || n > 10_000 {
		return nil, errors.New("statistics.quantiles: n must be between 1 and 10000")
	}
	sort.Float64s(fs)
	m := len(fs)
	var out []starlark.Value
	if method != "exclusive" && method != "inclusive" {
		return nil, fmt.Errorf("statistics.quantiles: unknown method %q", method)
	}
	for i := 1; i < n; i++ {
		// Python's arithmetic, interpolating between data[j-1] and data[j] (exclusive) or data[j] and
		// data[j+1] (inclusive).
		if method == "inclusive" {
			j, delta := i*(m-1)/n, i*(m-1)%n
			out = append(out, starlark.Float((fs[j]*float64(n-delta)+fs[min(j+1, m-1)]*float64(delta))/float64(n)))
			continue
		}
		j := max(1, min(i*(m+1)/n, m-1))
		delta := i*(m+1) - j*n
		out = append(out, starlark.Float((fs[j-1]*float64(n-delta)+fs[j]*float64(delta))/float64(n)))
	}
	return starlark.NewList(out), nil
}

// mathClassify is isinf, isnan and isfinite.
func mathClassify(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x floatArg
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &x); err != nil {
		return nil, err
	}
	f := float64(x)
	switch b.Name() {
	case "math.isinf":
		return starlark.Bool(math.IsInf(f, 0)), nil
	case "math.isnan":
		return starlark.Bool(math.IsNaN(f)), nil
	}
	return starlark.Bool(!math.IsInf(f, 0) && !math.IsNaN(f)), nil
}
